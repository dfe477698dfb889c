// `npm run bench`: every benchmark, each printing ratios against a reference measured in the same run.
import { benchApi } from './api.ts';
import { benchEvents } from './events.ts';
import { benchLandscape } from './landscape.ts';
import { benchWorkspaces } from './workspaces.ts';

await benchApi();
await benchLandscape();
await benchEvents();
await benchWorkspaces();
