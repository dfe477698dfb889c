#!/usr/bin/env -S node --max-semi-space-size=64
// The `svc` command. The client commands run the JavaScript prebuilt into dist/cli by scripts/build-cli.mjs (at
// set-up; rebuilt here first only when a source changed since), never transpiled at run time. `svc server` and
// `svc admin` run the platform's TypeScript sources, through tsx registered here.
// --max-semi-space-size=64 (MiB, V8's young generation; the line above, since V8 reads it only at start): the
// server's requests make short-lived garbage fast (a page of GET /workspaces is ~1,400 strings), and with V8's
// default of 16 it spent 12-14 % of its time in scavenges; 64 cuts that to ~2 % for up to ~100 MiB more memory at
// peak (docs/api.md, docs/decisions.md). Tests and benchmarks start the server with the same flags
// (test/helpers/process.ts reads them from this line); `npm start` and `npm run up` pass the same to tsx.
import { ensureCliBuilt } from '../scripts/build-cli.mjs';

const argv = process.argv.slice(2);
if (argv[0] === 'server' || argv[0] === 'admin') (await import('tsx/esm/api')).register();
const { main } = await import(await ensureCliBuilt());
process.exitCode = await main(argv);
