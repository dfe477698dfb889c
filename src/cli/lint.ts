// `svc lint [FILE] [--profile P] [--json]`: checks a landscape file offline. Exit 0 when valid, 1 when it has
// errors, 2 when it cannot be read (or the command line is wrong).
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { isProfileName, parseLandscape, profileFileName, type LandscapeError } from '../landscape/index.ts';

const usage = `Usage: svc lint [FILE] [--profile P] [--json]

Checks a landscape file offline and prints file:line:column: code: message for each error.
  FILE          the file, or a directory holding it (default: svc.yml in the current directory)
  --profile P   check svc.P.yml instead of svc.yml
  --json        print the result as JSON
Exit status: 0 valid, 1 errors, 2 the file cannot be read.
`;

interface LintIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  cwd: string;
}

interface LintArguments {
  file?: string;
  profile?: string;
  json: boolean;
}

export async function lintCommand(argv: string[], io: LintIo): Promise<number> {
  const parsed = parseArguments(argv);
  if (parsed === 'help') {
    io.stdout(usage);
    return 0;
  }
  if (typeof parsed === 'string') {
    io.stderr(`svc lint: ${parsed}\n\n${usage}`);
    return 2;
  }
  const target = await resolveFile(parsed, io.cwd);
  if (typeof target === 'string') {
    io.stderr(`svc lint: ${target}\n`);
    return 2;
  }
  let text: string;
  try {
    text = await readFile(target.absolute, 'utf8');
  } catch (error) {
    io.stderr(`svc lint: cannot read ${target.shown}: ${readError(error)}\n`);
    return 2;
  }
  const result = parseLandscape(text);
  if (parsed.json) {
    const body = { file: target.shown, valid: result.errors.length === 0, errors: result.errors, omitted: result.omitted };
    io.stdout(`${JSON.stringify(body, null, 2)}\n`);
  } else if (result.errors.length === 0) {
    const count = Object.keys(result.landscape?.services ?? {}).length;
    io.stdout(`${target.shown}: OK (svc/v1, ${count} ${count === 1 ? 'service' : 'services'})\n`);
  } else {
    io.stdout(result.errors.map((error) => formatError(target.shown, error)).join(''));
    const total = result.errors.length + result.omitted;
    const more = result.omitted > 0 ? ` (${result.omitted} more not shown)` : '';
    io.stderr(`${target.shown}: ${total} ${total === 1 ? 'error' : 'errors'}${more}\n`);
  }
  return result.errors.length === 0 ? 0 : 1;
}

export function formatError(file: string, error: LandscapeError): string {
  return `${file}:${error.line}:${error.column}: ${error.code}: ${error.message}\n`;
}

function parseArguments(argv: string[]): LintArguments | 'help' | string {
  const out: LintArguments = { json: false };
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i];
    if (argument === '--help' || argument === '-h') return 'help';
    if (argument === '--json') out.json = true;
    else if (argument === '--profile' || argument.startsWith('--profile=')) {
      const value = argument === '--profile' ? argv[++i] : argument.slice('--profile='.length);
      if (value === undefined || value === '') return '--profile needs a profile name';
      if (!isProfileName(value)) return `"${value}" is not a profile name (lowercase letters, digits and dashes)`;
      out.profile = value;
    } else if (argument.startsWith('-') && argument !== '-') return `unknown option ${argument}`;
    else if (out.file !== undefined) return 'give one file at most';
    else out.file = argument;
  }
  return out;
}

/** The file to read and how to show it: FILE, FILE/svc[.P].yml when FILE is a directory, or ./svc[.P].yml. */
async function resolveFile(args: LintArguments, cwd: string): Promise<{ absolute: string; shown: string } | string> {
  const name = profileFileName(args.profile ?? null);
  if (args.file === undefined) return { absolute: path.resolve(cwd, name), shown: name };
  const absolute = path.resolve(cwd, args.file);
  const isDirectory = await stat(absolute).then((info) => info.isDirectory(), () => false);
  if (isDirectory) return { absolute: path.join(absolute, name), shown: path.join(args.file, name) };
  if (args.profile !== undefined) return `--profile picks a file in a directory; ${args.file} is not a directory (give the file or the profile, not both)`;
  return { absolute, shown: args.file };
}

function readError(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return error instanceof Error ? error.message : String(error);
}
