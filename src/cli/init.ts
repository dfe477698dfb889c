// `svc init [DIR] [--force] [--stdout]`: writes DIR/svc.yml from what the repository already says about how it runs
// (src/init), checked like `svc lint` before it is written. Exit 0 written, 1 nothing to read or an existing file,
// 2 bad arguments.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { draftFromRepository, initSources, renderDraft } from '../init/index.ts';
import { parseLandscape } from '../landscape/index.ts';
import { formatError } from './lint.ts';
import type { CommandIo } from './main.ts';

const usage = `Usage: svc init [DIR] [--force] [--stdout]

Writes DIR/svc.yml (default: the current directory) from the repository's .devcontainer/devcontainer.json,
docker-compose.yml (or compose.yaml), Procfile, .gitpod.yml and package.json, with comments saying where each
part came from and what could not be mapped.
  --force    replace an existing svc.yml
  --stdout   print the file instead of writing it
`;

export async function initCommand(argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { force: { type: 'boolean' }, stdout: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
    if (parsed.positionals.length > 1) throw new Error(`unexpected argument "${parsed.positionals[1]}"`);
  } catch (error) {
    io.stderr(`svc init: ${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout(usage);
    return 0;
  }
  const directory = path.resolve(io.cwd, parsed.positionals[0] ?? '.');
  let draft;
  try {
    draft = await draftFromRepository(directory);
  } catch (error) {
    io.stderr(`svc init: ${(error as Error).message}\n`);
    return 1;
  }
  if (draft.sources.length === 0) {
    io.stderr(`svc init: found none of ${initSources.join(', ')} in ${directory}; nothing to map (docs/svc-yml.md shows how to write svc.yml)\n`);
    return 1;
  }
  const text = renderDraft(draft);
  const checked = parseLandscape(text);
  if (checked.errors.length) {
    // a bug of svc init, said as such rather than writing a file svc would refuse
    io.stderr(`svc init: the file it made does not pass svc lint:\n${checked.errors.map((e) => formatError('svc.yml', e)).join('')}`);
    return 1;
  }
  if (parsed.values.stdout) {
    io.stdout(text);
    return 0;
  }
  const target = path.join(directory, 'svc.yml');
  try {
    await writeFile(target, text, { flag: parsed.values.force ? 'w' : 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    io.stderr(`svc init: ${target} exists; pass --force to replace it\n`);
    return 1;
  }
  const services = [...draft.services].map(([name, { service }]) => `${name} (${service.type === 'managed' ? `managed ${service.provider}` : service.type})`);
  io.stdout(`Wrote ${path.relative(io.cwd, target) || 'svc.yml'} from ${draft.sources.join(', ')}: ${services.length ? services.join(', ') : 'no services'}.\n`);
  if (draft.unmapped.length) io.stdout(`Not mapped (listed at the top of the file):\n${draft.unmapped.map((u) => `  - ${u}\n`).join('')}`);
  io.stdout('Check it, then run: svc lint && svc sync\n');
  return 0;
}
