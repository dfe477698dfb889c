// `npm run bench`: every benchmark, each printing ratios against a reference measured in the same run.
// `npm run bench -- router events` runs only those named. At the end, the table of issue 17 (bench/summary.ts).
import { benchApi } from './api.ts';
import { benchControlPlane } from './control-plane.ts';
import { benchEvents } from './events.ts';
import { benchImages } from './images.ts';
import { benchLandscape } from './landscape.ts';
import { benchManaged } from './managed.ts';
import { benchRouter } from './router.ts';
import { benchWorkspaces } from './workspaces.ts';
import { benchCli } from './cli.ts';
import { benchLists } from './lists.ts';
import { benchSsh } from './ssh.ts';
import { summaryLines } from './summary.ts';

const benchmarks: Record<string, () => Promise<void>> = {
  cli: () => benchCli(),
  api: () => benchApi(),
  lists: () => benchLists(),
  landscape: () => benchLandscape(),
  events: () => benchEvents(),
  workspaces: () => benchWorkspaces(),
  router: () => benchRouter(),
  managed: () => benchManaged(),
  images: () => benchImages(),
  'control-plane': () => benchControlPlane(),
  ssh: () => benchSsh(),
};

const named = process.argv.slice(2);
const unknown = named.filter((name) => !(name in benchmarks));
if (unknown.length > 0) throw new Error(`no benchmark ${unknown.join(', ')}; there are: ${Object.keys(benchmarks).join(', ')}`);
for (const [name, run] of Object.entries(benchmarks)) {
  if (named.length === 0 || named.includes(name)) await run();
}
console.log(summaryLines().join('\n'));
