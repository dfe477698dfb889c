// Runs `svc` commands through one CLI entry module in one process, one after the other, and writes what each printed
// and its exit status as JSON: `node [--import tsx] test/helpers/cli-runner.mjs ENTRY OUT.json '[["ws","--help"],...]'`
// with ENTRY the sources (src/cli/main.ts, with tsx) or the prebuilt CLI (dist/cli/main.js, plain Node). One process
// for all, because a process per command, a few hundred of them, takes minutes on a busy machine.
// Plain JavaScript, so that the prebuilt side runs without tsx, as the installed `svc` does.
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

const [entry, out, list] = process.argv.slice(2);
const { main } = await import(pathToFileURL(entry).href);
const runs = [];
const write = { stdout: process.stdout.write, stderr: process.stderr.write };
for (const argv of JSON.parse(list)) {
  let stdout = '';
  let stderr = '';
  process.stdout.write = (chunk) => ((stdout += chunk), true);
  process.stderr.write = (chunk) => ((stderr += chunk), true);
  try {
    runs.push({ code: await main(argv), stdout, stderr });
  } finally {
    process.stdout.write = write.stdout;
    process.stderr.write = write.stderr;
  }
}
await writeFile(out, JSON.stringify(runs));
