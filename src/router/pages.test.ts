import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { renderPage, routerPages, sendPage, wantsHtml, type RouterPageName } from './pages.ts';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

// Spec section 7, "Router pages on workspace addresses", row by row.
const table: [RouterPageName, number, string][] = [
  ['noWorkspace', 404, 'Nothing here'],
  ['nothingServed', 404, 'Nothing is served here yet'],
  ['noRoute', 404, 'Nothing is served at this path'],
  ['serviceStopped', 503, 'This service is stopped'],
  ['workspaceNotRunning', 503, 'Workspace is not running'],
  ['routerStarting', 503, 'Router is starting'],
  ['noAnswer', 502, 'Workspace did not answer'],
  ['timeout', 504, 'The site did not answer in time'],
  ['forwardForbidden', 502, 'This forward target is not allowed'],
  ['forwardUnreachable', 502, 'The forward target did not answer'],
  ['signInRequired', 401, 'Sign-in required'],
  ['cookieBlockedInFrame', 401, 'Your browser blocked the workspace cookie'],
  ['cookieNotKept', 401, 'Your browser did not keep the workspace cookie'],
  ['linkExpired', 403, 'This link has expired'],
  ['crossSite', 403, 'Request from another site refused'],
  ['signInUnavailable', 503, 'Sign-in is unavailable'],
  ['tooLarge', 413, 'Request too large'],
  ['uriTooLong', 414, 'Address too long'],
  ['badRequest', 400, 'Bad request'],
  ['s3Endpoint', 200, 'S3 endpoint'],
  ['managedSignIn', 401, 'Sign-in required'],
  ['managedPaused', 503, 'This managed service is paused'],
  ['managedStarting', 503, 'This service is starting'],
  ['managedNoAnswer', 502, 'The managed service did not answer'],
  ['managedNothing', 404, 'Nothing here'],
];

test('the catalog holds every page of the table and the two waking pages, nothing else', () => {
  assert.deepEqual(Object.keys(routerPages).sort(), [...table.map(([name]) => name), 'waking', 'wakeBlocked'].sort());
  for (const [name, page] of Object.entries(routerPages)) assert.ok(page.explanation.length > 20, `${name} explains itself`);
});

const SIGN_IN_HINT = ': send an API key: curl -H "Svc-Authorization: Bearer <key>" URL';
const textHints: Partial<Record<RouterPageName, string>> = {
  signInRequired: SIGN_IN_HINT,
  managedSignIn: ': send an API key of the team: curl -H "Svc-Authorization: Bearer <key>" URL',
};

for (const [name, status, title] of table) {
  const hint = textHints[name] ?? '';
  test(`${name}: other clients get the line "${status} ${title}${hint}"`, () => {
    for (const accept of [undefined, '*/*', 'application/json']) {
      const page = renderPage(name, { accept, detail: 'service <web> said no' });
      assert.equal(page.status, status);
      assert.equal(page.body, `${status} ${title}${hint}\n`);
      assert.equal(page.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(page.headers['cache-control'], 'no-store');
      assert.equal(page.headers['content-length'], String(Buffer.byteLength(page.body)));
    }
  });

  test(`${name}: browsers get a page titled "${title}" with status ${status}`, () => {
    const page = renderPage(name, { accept: BROWSER });
    assert.equal(page.status, status);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.equal(page.headers['content-security-policy'], "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'");
    assert.match(page.body, /^<!doctype html>/);
    assert.ok(page.body.includes(`<title>${title}</title>`));
    assert.ok(page.body.includes(`<h1>${title}</h1>`));
    assert.ok(page.body.includes('prefers-color-scheme:dark'));
    assert.doesNotMatch(page.body, /<script|<link|src=/i, 'self-contained, no script');
  });
}

test('the detail is escaped in the page: a service name cannot inject markup', () => {
  const page = renderPage('noAnswer', { accept: BROWSER, detail: `<script>alert("x")</script> & 'web'` });
  assert.ok(!page.body.includes('<script>'));
  assert.ok(page.body.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;web&#39;'));
});

test('the request id is shown escaped on the page', () => {
  const page = renderPage('badRequest', { accept: BROWSER, requestId: 'req<1>' });
  assert.ok(page.body.includes('Request req&lt;1&gt;'));
});

test('wantsHtml: browsers yes; curl, libraries, a missing header and text/html;q=0 no', () => {
  assert.equal(wantsHtml(BROWSER), true);
  assert.equal(wantsHtml('text/html'), true);
  assert.equal(wantsHtml('text/html, application/json'), true, 'equal preference goes to HTML');
  assert.equal(wantsHtml('*/*'), false);
  assert.equal(wantsHtml('application/json'), false);
  assert.equal(wantsHtml('application/json, text/plain, */*'), false);
  assert.equal(wantsHtml(undefined), false);
  assert.equal(wantsHtml(''), false);
  assert.equal(wantsHtml('text/html;q=0'), false);
  assert.equal(wantsHtml('text/html;q=0, */*'), false);
  assert.equal(wantsHtml('application/json, text/html;q=0.5'), false, 'JSON preferred');
  assert.equal(wantsHtml('TEXT/HTML ; q=0.9, */*;q=0.1'), true, 'case and spaces do not matter');
  assert.equal(wantsHtml('text/*'), true);
  assert.equal(wantsHtml('text/html;q=0, text/*'), false, 'the specific range decides');
});

test('waking: 503 with Retry-After, a page that reloads itself every 2 s and shows the status text', () => {
  const page = renderPage('waking', { accept: BROWSER, detail: 'Restoring the archive' });
  assert.equal(page.status, 503);
  assert.equal(page.headers['retry-after'], '2');
  assert.ok(page.body.includes('<meta http-equiv="refresh" content="2">'));
  assert.ok(page.body.includes('Restoring the archive'));
  const plain = renderPage('waking', { accept: '*/*' });
  assert.equal(plain.headers['retry-after'], '2');
  assert.equal(plain.body, '503 Waking up\n');
});

test('waking names why it slept: on the page under the status text, and after the title for other clients', () => {
  const page = renderPage('waking', { accept: BROWSER, detail: 'Starting IDE', sleepReason: 'put to sleep by hand' });
  assert.ok(page.body.includes('<p class="detail">Why it slept: put to sleep by hand.</p>'), page.body);
  assert.ok(page.body.includes('Starting IDE'));
  const plain = renderPage('waking', { accept: undefined, detail: 'Starting IDE', sleepReason: 'nobody used it' });
  assert.equal(plain.body, '503 Waking up: nobody used it\n');
  assert.equal(plain.headers['retry-after'], '2');
  assert.ok(renderPage('waking', { accept: BROWSER, sleepReason: '<b>' }).body.includes('Why it slept: &lt;b&gt;.'));
});

test('wakeBlocked: 503 with Retry-After; the reason on the page and in the line for other clients', () => {
  const reason = 'waking is paused installation-wide';
  const page = renderPage('wakeBlocked', { accept: BROWSER, detail: reason, retryAfterSeconds: 30 });
  assert.equal(page.status, 503);
  assert.equal(page.headers['retry-after'], '30');
  assert.ok(page.body.includes('<h1>The workspace cannot be woken now</h1>'));
  assert.ok(page.body.includes(reason));
  assert.doesNotMatch(page.body, /http-equiv="refresh"/);
  const plain = renderPage('wakeBlocked', { accept: undefined, detail: `${reason}\nsecond line` });
  assert.equal(plain.headers['retry-after'], '10');
  assert.equal(plain.body, `503 The workspace cannot be woken now: ${reason} second line\n`);
  assert.equal(renderPage('wakeBlocked', { accept: undefined }).body, '503 The workspace cannot be woken now\n');
});

test('Retry-After only when given or the page has one; seconds are whole and not negative', () => {
  assert.equal(renderPage('noAnswer', { accept: undefined }).headers['retry-after'], undefined);
  assert.equal(renderPage('workspaceNotRunning', { accept: undefined, retryAfterSeconds: 9.2 }).headers['retry-after'], '10');
  assert.equal(renderPage('serviceStopped', { accept: undefined, retryAfterSeconds: -3 }).headers['retry-after'], '0');
});

test('a sign-in URL becomes the button, escaped; other schemes are not linked', () => {
  const url = 'https://console.example.com/workspace-sign-in?host=dev-w1.example.com&next=%2F';
  const page = renderPage('signInRequired', { accept: BROWSER, signInUrl: url });
  assert.ok(page.body.includes(`href="https://console.example.com/workspace-sign-in?host=dev-w1.example.com&amp;next=%2F"`));
  assert.ok(page.body.includes('>Sign in</a>'));
  const framed = renderPage('cookieBlockedInFrame', { accept: BROWSER, signInUrl: url });
  assert.match(framed.body, /target="_blank" rel="noopener noreferrer">Open in a new tab<\/a>/);
  for (const bad of ['javascript:alert(1)', '//evil.example.com/', 'data:text/html,x']) {
    assert.doesNotMatch(renderPage('signInRequired', { accept: BROWSER, signInUrl: bad }).body, /class="button primary"/, bad);
  }
  assert.ok(renderPage('linkExpired', { accept: BROWSER, signInUrl: '/workspace-sign-in' }).body.includes('href="/workspace-sign-in"'));
  assert.equal(renderPage('signInRequired', { accept: undefined, signInUrl: url }).body, `401 Sign-in required${SIGN_IN_HINT}\n`, 'no sign-in link');
});

async function serve(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test('sendPage answers by the request Accept header; HEAD gets the headers and no body', async () => {
  const server = await serve((_request, response) => sendPage(response, 'wakeBlocked', { detail: 'no capacity right now' }));
  try {
    const plain = await fetch(server.url, { headers: { accept: '*/*' } });
    assert.equal(plain.status, 503);
    assert.equal(plain.headers.get('retry-after'), '10');
    assert.equal(await plain.text(), '503 The workspace cannot be woken now: no capacity right now\n');
    const browser = await fetch(server.url, { headers: { accept: BROWSER } });
    assert.equal(browser.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(await browser.text(), /<h1>The workspace cannot be woken now<\/h1>/);
    const head = await fetch(server.url, { method: 'HEAD', headers: { accept: BROWSER } });
    assert.equal(head.status, 503);
    assert.equal(head.headers.get('retry-after'), '10');
    assert.equal(head.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(await head.text(), '');
  } finally {
    await server.close();
  }
});

test('sendPage drains an unread request body and keeps the explicit accept option', async () => {
  const server = await serve((_request, response) => sendPage(response, 'tooLarge', { accept: undefined }));
  try {
    const answer = await fetch(server.url, { method: 'POST', headers: { accept: BROWSER }, body: 'x'.repeat(256 * 1024) });
    assert.equal(answer.status, 413);
    assert.equal(await answer.text(), '413 Request too large\n');
  } finally {
    await server.close();
  }
});
