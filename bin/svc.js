#!/usr/bin/env node
// The `svc` command. The client commands run the JavaScript prebuilt into dist/cli by scripts/build-cli.mjs (at
// set-up; rebuilt here first only when a source changed since), never transpiled at run time. `svc server` and
// `svc admin` run the platform's TypeScript sources, through tsx registered here.
import { ensureCliBuilt } from '../scripts/build-cli.mjs';

const argv = process.argv.slice(2);
if (argv[0] === 'server' || argv[0] === 'admin') (await import('tsx/esm/api')).register();
const { main } = await import(await ensureCliBuilt());
process.exitCode = await main(argv);
