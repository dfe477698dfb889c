// How the waiting page opens what it waits for the moment it can be answered, instead of at its next reload: a
// small script asks `WAIT_PATH?path=<the page's own address>`, which the router holds as it would hold the request
// itself (the workspace waking, the service starting) and answers 204 once it could be served; the page then
// reloads. Without script the page's refresh still reloads it every few seconds.
import { createHash } from 'node:crypto';
import { MAX_URL_LENGTH } from './routes.ts';

/** On every workspace host, like the sign-in path: never reaches the workspace. */
export const WAIT_PATH = '/.svc/wait';
/** How long one wait is held; the script asks again after a refusal that may pass (503). */
export const WAIT_HOLD_MS = 25_000;

/** The address a wait is for, when `url` is one (`/.svc/wait?path=/app?x=1`); undefined otherwise. */
export function waitTarget(url: string | undefined): string | undefined {
  if (!url || (url !== WAIT_PATH && !url.startsWith(`${WAIT_PATH}?`))) return undefined;
  const target = new URLSearchParams(url.slice(WAIT_PATH.length + 1)).get('path') ?? '/';
  return target.startsWith('/') && !target.startsWith('//') && target.length <= MAX_URL_LENGTH ? target : '/';
}

/**
 * The page's script: waits on WAIT_PATH for its own address and asks again after a 503 (still waking after a
 * hold); any other answer is what the address answers now (204: served; 404: nothing is served there), so it
 * reloads to show it.
 */
export const WAITING_SCRIPT = `(function () {
  var target = location.pathname + location.search;
  function wait() {
    fetch(${JSON.stringify(WAIT_PATH)} + '?path=' + encodeURIComponent(target), { cache: 'no-store', credentials: 'same-origin' })
      .then(function (answer) {
        if (answer.status === 503) setTimeout(wait, 250);
        else location.reload();
      }, function () { setTimeout(wait, 1000); });
  }
  wait();
})();`;

/** For the page's Content-Security-Policy: this script and no other may run. */
export const WAITING_SCRIPT_HASH = `'sha256-${createHash('sha256').update(WAITING_SCRIPT).digest('base64')}'`;
