// /cli-login on the console host: where `svc login` sends the browser. With the browser session it asks the person
// to allow the command line, mints a key with source `cli` (POST /me/api-keys, which needs the session) and hands
// it to the command's listener on 127.0.0.1:<port> by a form POST carrying the command's `state`. Without a
// session it goes to /sign-in and comes back. Standalone until the React console takes the page over; it uses only
// the public API.
import type { FastifyInstance } from 'fastify';

const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in the command line · svc</title>
<meta name="viewport" content="width=device-width"><style>
body{font:15px system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:560px;margin:64px auto;background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:28px 32px}
h1{font-size:22px;margin:0 0 16px}.actions{display:flex;gap:8px;margin-top:20px}
button{font:inherit;padding:8px 14px;border-radius:6px;border:1px solid #2457d6;background:#2457d6;color:#fff;cursor:pointer}
button.plain{background:#fff;color:#2457d6}button:disabled{opacity:.5;cursor:default}
.hint{color:#5b6473;font-size:13px}.error{color:#b3261e}</style></head><body><main>
<h1>Sign in the command line</h1>
<p id="question">Checking who you are…</p>
<p class="hint" id="hint" hidden>Allow it only if you just ran <code>svc login</code> on that computer. The command line
gets an API key of its own; <code>svc logout</code> or the key list deletes it.</p>
<div class="actions" id="actions" hidden><button id="allow">Allow</button><button class="plain" id="deny">Cancel</button></div>
<p id="status"></p><p class="error" id="error"></p></main>
<script>
const query = new URLSearchParams(location.search);
const port = query.get('port') || '';
const state = query.get('state') || '';
const host = (query.get('host') || '').trim().slice(0, 64).trim() || 'your computer';
const show = (id, text) => { document.getElementById(id).textContent = text; };
const api = async (method, path, body) => {
  const response = await fetch('/api/v1' + path, { method, credentials: 'same-origin',
    headers: Object.assign({ 'Svc-CSRF': '1' }, body ? { 'Content-Type': 'application/json' } : {}),
    body: body ? JSON.stringify(body) : undefined });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw Object.assign(new Error(data && data.title ? data.title + (data.detail ? ': ' + data.detail : '') : response.statusText), { status: response.status });
  return data;
};
/* A form POST, not fetch: a page may navigate to the loopback listener without CORS. */
const handBack = (fields) => {
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = 'http://127.0.0.1:' + port + '/callback';
  for (const [name, value] of Object.entries(fields)) {
    const input = document.createElement('input');
    input.type = 'hidden'; input.name = name; input.value = value; form.append(input);
  }
  document.body.append(form);
  form.submit();
};
const buttons = (enabled) => { for (const id of ['allow', 'deny']) document.getElementById(id).disabled = !enabled; };
const valid = /^[1-9][0-9]{0,4}$/.test(port) && Number(port) <= 65535 && /^[A-Za-z0-9_-]{16,128}$/.test(state);
if (!valid) { show('question', ''); show('error', 'This address is not a complete command-line sign-in. Run svc login again.'); }
else api('GET', '/me').then((me) => {
  show('question', 'Allow the command line on ' + host + ' to act as ' + me.name + ' <' + me.email + '>?');
  document.getElementById('hint').hidden = false;
  document.getElementById('actions').hidden = false;
}, (e) => {
  if (e.status === 401) return location.replace('/sign-in?return=' + encodeURIComponent(location.pathname + location.search));
  show('question', ''); show('error', e.message);
});
document.getElementById('allow').onclick = () => {
  buttons(false); show('error', ''); show('status', 'Creating a key…');
  api('POST', '/me/api-keys', { name: 'svc CLI on ' + host, source: 'cli' }).then((key) => {
    show('status', 'Handing the key to the command line…');
    handBack({ state, token: key.token, key_id: key.id });
  }, (e) => { buttons(true); show('status', ''); show('error', e.message); });
};
document.getElementById('deny').onclick = () => { buttons(false); handBack({ state, error: 'denied' }); };
</script></body></html>`;

const securityPolicy = [
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  // The key leaves the page only towards the waiting command on this computer.
  'form-action http://127.0.0.1:*',
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export default async function cliLoginPage(app: FastifyInstance): Promise<void> {
  app.get('/cli-login', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', securityPolicy)
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store')
      .send(page),
  );
}
