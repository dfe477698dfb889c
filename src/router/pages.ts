// The router's pages (spec 7, "Router pages on workspace addresses", and the waking pages of 3.1): browsers get a
// page; other clients get the status and the title as one line of text (with what they can do about it, when a
// browser's button would say: an API key in Svc-Authorization for a sign-in).
import type { ServerResponse } from 'node:http';
import { pageHtml } from './page-html.ts';
import { WAITING_SCRIPT_HASH } from './waiting.ts';

export interface RouterPage {
  status: number;
  title: string;
  /** What happened and what to do: the page's default sentence under the title. */
  explanation: string;
  /** The label of the button that follows `signInUrl` (default "Sign in"); `signInNewTab` leaves the frame. */
  signInLabel?: string;
  signInNewTab?: boolean;
  /** Offers a "Try again" link: the cause may pass by itself. */
  retry?: boolean;
  /** `Retry-After` unless the caller gives its own. */
  retryAfterSeconds?: number;
  /** A waiting page: reloads itself after this many seconds, and its detail is the status text it shows. */
  refreshSeconds?: number;
  /** The one line for non-browser clients also carries the detail (3.1: "the reason as text"). */
  detailInText?: boolean;
  /** What a client without a browser can do, after the title in its one line (curl has no sign-in button). */
  textHint?: string;
}

const keyHint = (whose: string) => `send an API key${whose}: curl -H "Svc-Authorization: Bearer <key>" URL`;

export const routerPages = {
  noWorkspace: {
    status: 404,
    title: 'Nothing here',
    explanation: 'This address belongs to no workspace, or the workspace no longer exists. Check the address, or open the workspace from the console.',
  },
  nothingServed: {
    status: 404,
    title: 'Nothing is served here yet',
    explanation: 'No service listens on this port, or none serves / on this address. Start the service, or give one of its ports a route for /.',
  },
  noRoute: {
    status: 404,
    title: 'Nothing is served at this path',
    explanation: 'No route of the workspace matches this path. Check the address, or add a route for it to svc.yml.',
  },
  serviceStopped: {
    status: 503,
    title: 'This service is stopped',
    explanation: 'The service behind this address is switched off, perhaps for the night. Start it from the console, then reload.',
  },
  workspaceNotRunning: {
    status: 503,
    title: 'Workspace is not running',
    explanation: 'The workspace is stopped, and requests do not start it. Start it from the console, then reload.',
  },
  routerStarting: {
    status: 503,
    title: 'Router is starting',
    explanation: 'The router is still loading the routes of the workspaces. This takes a moment.',
    retryAfterSeconds: 2,
    refreshSeconds: 2,
  },
  noAnswer: {
    status: 502,
    title: 'Workspace did not answer',
    explanation: 'The service runs but did not answer the request. Look at its logs in the console, then try again.',
    retry: true,
  },
  timeout: {
    status: 504,
    title: 'The site did not answer in time',
    explanation: 'The service took longer than this address allows. Try again; if it keeps happening, look at its logs in the console.',
    retry: true,
  },
  forwardForbidden: {
    status: 502,
    title: 'This forward target is not allowed',
    explanation: 'The network rules of this installation forbid the address the forward points to. Change the target, or ask an administrator to allow it.',
  },
  forwardUnreachable: {
    status: 502,
    title: 'The forward target did not answer',
    explanation: 'The router could not reach the forward target. Check that it is up and that its address in svc.yml is right.',
    retry: true,
  },
  signInRequired: {
    status: 401,
    title: 'Sign-in required',
    explanation: 'This workspace address is private. Sign in with the console to open it.',
    textHint: keyHint(''),
  },
  cookieBlockedInFrame: {
    status: 401,
    title: 'Your browser blocked the workspace cookie',
    explanation: 'Inside the console your browser did not keep the cookie that signs you in on this address. Open the address in a new tab, or allow cookies for it.',
    signInLabel: 'Open in a new tab',
    signInNewTab: true,
  },
  cookieNotKept: {
    status: 401,
    title: 'Your browser did not keep the workspace cookie',
    explanation: 'Your browser blocks cookies for this address, so the sign-in did not last. Allow cookies for it, then sign in again.',
    signInLabel: 'Sign in again',
  },
  linkExpired: {
    status: 403,
    title: 'This link has expired',
    explanation: 'Sign-in links work once and only briefly. Open the address from the console again.',
    signInLabel: 'Sign in again',
  },
  crossSite: {
    status: 403,
    title: 'Request from another site refused',
    explanation: 'A page outside this workspace and the console tried to change something here. Start the action from the workspace itself.',
  },
  signInUnavailable: {
    status: 503,
    title: 'Sign-in is unavailable',
    explanation: 'The platform could not confirm your sign-in just now. Try again in a moment.',
    retry: true,
  },
  tooLarge: {
    status: 413,
    title: 'Request too large',
    explanation: 'The request body is larger than this address allows (100 MiB unless the domain sets another limit). Send less at once.',
  },
  uriTooLong: {
    status: 414,
    title: 'Address too long',
    explanation: 'The address is too long for the router. Shorten its path or query.',
  },
  badRequest: {
    status: 400,
    title: 'Bad request',
    explanation: 'The router cannot handle this request. Check it and send it again.',
  },
  s3Endpoint: {
    status: 200,
    title: 'S3 endpoint',
    explanation: "This is the S3 endpoint of a managed object store. Use an S3 client with the store's credentials; objects are at /<bucket>/<key>.",
  },
  managedSignIn: {
    status: 401,
    title: 'Sign-in required',
    explanation: "This managed service is behind your team's sign-in. Sign in with the console, or send an API key of the team in Svc-Authorization.",
    textHint: keyHint(' of the team'),
  },
  managedPaused: {
    status: 503,
    title: 'This managed service is paused',
    explanation: 'The managed service is paused. Resume it from the console, then reload.',
  },
  managedStarting: {
    status: 503,
    title: 'This service is starting',
    explanation: 'No server of the managed service is ready yet. It answers as soon as one is.',
    retryAfterSeconds: 2,
    refreshSeconds: 2,
  },
  managedNoAnswer: {
    status: 502,
    title: 'The managed service did not answer',
    explanation: 'The managed service runs but did not answer the request. Look at its status in the console, then try again.',
    retry: true,
  },
  managedNothing: {
    status: 404,
    title: 'Nothing here',
    explanation: 'No managed service has this number, or it was deleted. Check the address in the console.',
  },
  waking: {
    status: 503,
    title: 'Waking up',
    explanation: 'What this address leads to was asleep and is starting again. The page opens by itself once it answers.',
    retryAfterSeconds: 2,
    refreshSeconds: 2,
  },
  wakeBlocked: {
    status: 503,
    title: 'The workspace cannot be woken now',
    explanation: 'Something keeps the workspace from waking up. Try again later, or look at the workspace in the console.',
    retry: true,
    retryAfterSeconds: 10,
    detailInText: true,
  },
} satisfies Record<string, RouterPage>;

export type RouterPageName = keyof typeof routerPages;

export interface PageOptions {
  /** The request's `Accept` header: it chooses between the page and the one line of text. */
  accept: string | undefined;
  /** Specifics of this case (a service name, a blocker's reason); user-controlled, so always escaped. */
  detail?: string;
  /**
   * Why what is being woken slept (3.1 wake reasons: "put to sleep by hand", "nobody used it", ...): the waiting
   * page names it, and the one line for other clients gives it after the title.
   */
  sleepReason?: string;
  retryAfterSeconds?: number;
  /** Where the page's sign-in button leads; only http(s) and same-site paths are linked. */
  signInUrl?: string;
  requestId?: string;
}

export interface RenderedPage {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const HTML_TYPES = new Set(['text/html', 'text/*']);

/** The q-value of one `Accept` member: 1 when absent or malformed, else within [0, 1]. */
function quality(parameters: string[]): number {
  for (const parameter of parameters) {
    const [name, value] = parameter.split('=').map((part) => part.trim());
    if (name.toLowerCase() !== 'q' || value === undefined) continue;
    const q = Number(value);
    return Number.isFinite(q) && value !== '' ? Math.min(1, Math.max(0, q)) : 1;
  }
  return 1;
}

/**
 * Whether the client asked for HTML: it lists text/html (or text/*) at q > 0, and at least as high as anything
 * else it lists. `*\/*` alone (curl, most libraries) and a missing header are not a browser.
 */
export function wantsHtml(acceptHeader: string | undefined): boolean {
  if (!acceptHeader) return false;
  let html = -1;
  let htmlRange = '';
  let other = 0;
  const members = acceptHeader.split(',').map((member) => {
    const [range, ...parameters] = member.split(';');
    return { range: range.trim().toLowerCase(), q: quality(parameters) };
  });
  // text/html outranks text/* when both are listed (the more specific range decides).
  for (const { range, q } of members) {
    if (!HTML_TYPES.has(range)) continue;
    if (htmlRange === '' || (range === 'text/html' && htmlRange === 'text/*') || (range === htmlRange && q > html)) {
      html = q;
      htmlRange = range;
    }
  }
  if (html <= 0) return false;
  for (const { range, q } of members) {
    // XHTML is listed beside text/html by browsers; it is HTML too, not a competing type.
    if (range !== '' && range !== htmlRange && range !== 'application/xhtml+xml') other = Math.max(other, q);
  }
  return html >= other;
}

/** A link target the page may offer: an absolute http(s) URL or a path on this site, nothing else. */
function safeHref(url: string | undefined): string | undefined {
  if (!url) return undefined;
  if (url.startsWith('/')) return url.startsWith('//') || url.startsWith('/\\') ? undefined : url;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function renderPage(name: RouterPageName, options: PageOptions): RenderedPage {
  const page: RouterPage = routerPages[name];
  const detail = options.detail !== undefined && oneLine(options.detail) !== '' ? options.detail.trim() : undefined;
  const retryAfter = options.retryAfterSeconds ?? page.retryAfterSeconds;
  const headers: Record<string, string> = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
  if (retryAfter !== undefined && Number.isFinite(retryAfter)) headers['retry-after'] = String(Math.max(0, Math.ceil(retryAfter)));
  let body: string;
  if (wantsHtml(options.accept)) {
    const href = safeHref(options.signInUrl);
    const waiting = page.refreshSeconds !== undefined;
    body = pageHtml({
      status: page.status,
      title: page.title,
      explanation: page.explanation,
      detail: options.sleepReason ? `Why it slept: ${options.sleepReason}.` : waiting ? undefined : detail,
      statusText: waiting && detail !== page.title ? detail : undefined,
      action: href ? { label: page.signInLabel ?? 'Sign in', href, newTab: page.signInNewTab ?? false } : undefined,
      retry: page.retry ?? false,
      refreshSeconds: page.refreshSeconds,
      reloadWhenReady: name === 'waking',
      requestId: options.requestId,
    });
    headers['content-type'] = 'text/html; charset=utf-8';
    const script = name === 'waking' ? `; script-src ${WAITING_SCRIPT_HASH}; connect-src 'self'` : '';
    headers['content-security-policy'] = `default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'${script}`;
    headers['referrer-policy'] = 'no-referrer';
  } else {
    const said = options.sleepReason ?? (page.detailInText ? detail : undefined) ?? page.textHint;
    const reason = said && oneLine(said) !== '' ? `: ${oneLine(said)}` : '';
    body = `${page.status} ${page.title}${reason}\n`;
    headers['content-type'] = 'text/plain; charset=utf-8';
  }
  headers['content-length'] = String(Buffer.byteLength(body));
  return { status: page.status, headers, body };
}

/**
 * Answers with the page: `accept` defaults to the request's header; HEAD gets the headers without the body. An
 * answer already under way cannot turn into a page, so the connection is cut instead.
 */
export function sendPage(response: ServerResponse, name: RouterPageName, options: Partial<PageOptions> = {}): void {
  const request = response.req;
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const accept = 'accept' in options ? options.accept : request?.headers.accept;
  const page = renderPage(name, { ...options, accept });
  response.writeHead(page.status, page.headers);
  response.end(request?.method === 'HEAD' ? undefined : page.body);
  // An unread request body would hold the connection; drain it.
  request?.resume();
}
