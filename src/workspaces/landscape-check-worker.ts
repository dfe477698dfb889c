// The entry of a landscape-check worker thread (landscape-checker.ts starts it): checks one file per message.
import { parentPort } from 'node:worker_threads';
import { checkLandscapeText, type LandscapeCheckRequest } from './landscape-check.ts';

const port = parentPort!;
port.on('message', (request: LandscapeCheckRequest) => {
  try {
    port.postMessage({ result: checkLandscapeText(request) });
  } catch (error) {
    port.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
port.postMessage({ ready: true });
