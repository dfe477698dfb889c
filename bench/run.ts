// `npm run bench`: every benchmark, each printing ratios against a reference measured in the same run.
import { benchApi } from './api.ts';

await benchApi();
