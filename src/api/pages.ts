// The console's first pages: /sign-in (link or password), / (who you are, your API keys) and /workspace-sign-in.
// The React console (console/, served by console-static.ts) replaces them; they remain for a server whose console
// is not built. They use only the public API.
import type { FastifyInstance } from 'fastify';
import { registerConsoleApp } from './console-static.ts';
import type { ApiDeps } from './context.ts';

const style = `body{font:15px system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:720px;margin:48px auto;background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:28px 32px}
h1{font-size:22px;margin:0 0 16px}h2{font-size:17px;margin:28px 0 8px}
input,button{font:inherit;padding:7px 10px;border-radius:6px;border:1px solid #c5cbd5}
button{background:#2457d6;color:#fff;border-color:#2457d6;cursor:pointer}button.plain{background:#fff;color:#2457d6}
table{width:100%;border-collapse:collapse}td,th{text-align:left;padding:6px 4px;border-bottom:1px solid #eef0f3}
.error{color:#b3261e}.token{font-family:monospace;background:#eef3ff;padding:8px;word-break:break-all}
form{display:flex;gap:8px;flex-wrap:wrap;align-items:center}`;

const shared = `const api = async (method, path, body) => {
  const response = await fetch('/api/v1' + path, { method, credentials: 'same-origin',
    headers: Object.assign({ 'Svc-CSRF': '1' }, body ? { 'Content-Type': 'application/json' } : {}),
    body: body ? JSON.stringify(body) : undefined });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error(data && data.title ? data.title + (data.detail ? ': ' + data.detail : '') : response.statusText);
  return data;
};
const show = (id, text) => { document.getElementById(id).textContent = text; };`;

const signInPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in · svc</title>
<meta name="viewport" content="width=device-width"><style>${style}</style></head><body><main>
<h1>Sign in to svc</h1><p id="status">Sign in with your e-mail and password, or open a sign-in link.</p>
<form id="password"><input name="email" type="email" placeholder="E-mail" required autocomplete="username">
<input name="password" type="password" placeholder="Password" required autocomplete="current-password">
<button>Sign in</button></form><p id="providers"></p><p class="error" id="error"></p></main>
<script>${shared}
const back = new URLSearchParams(location.search).get('return') || '/';
api('GET', '/auth/providers').then((list) => { for (const p of list) { const a = document.createElement('a');
  a.href = p.start_url + '?return=' + encodeURIComponent(back); a.textContent = 'Sign in with ' + p.name;
  document.getElementById('providers').append(a, ' '); } }, () => undefined);
const done = () => location.replace(back.startsWith('/') && !back.startsWith('//') ? back : '/');
const token = new URLSearchParams(location.hash.slice(1)).get('token');
history.replaceState(null, '', '/sign-in' + location.search);
if (token) { show('status', 'Signing you in…');
  api('POST', '/sessions', { link_token: token }).then(done, (e) => { show('status', ''); show('error', e.message); }); }
document.getElementById('password').addEventListener('submit', (event) => { event.preventDefault();
  const form = new FormData(event.target);
  api('POST', '/sessions', { email: form.get('email'), password: form.get('password') }).then(done, (e) => show('error', e.message)); });
</script></body></html>`;

const homePage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>svc</title>
<meta name="viewport" content="width=device-width"><style>${style}</style></head><body><main>
<h1>svc</h1><p id="who">Loading…</p><button class="plain" id="signout">Sign out</button>
<h2>API keys</h2><form id="create"><input name="name" placeholder="Key name" required maxlength="100">
<button>Create key</button></form><p class="token" id="token" hidden></p><p class="error" id="error"></p>
<table><thead><tr><th>Name</th><th>Prefix</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody id="keys"></tbody></table>
</main><script>${shared}
const when = (t) => t ? new Date(t).toLocaleString() : '—';
async function load() {
  const me = await api('GET', '/me').catch(() => null);
  if (!me) return location.replace('/sign-in');
  show('who', 'Signed in as ' + me.name + ' <' + me.email + '>' + (me.permissions.includes('platform.admin') ? ' · administrator' : ''));
  const keys = await api('GET', '/me/api-keys?limit=200');
  const body = document.getElementById('keys'); body.replaceChildren();
  for (const key of keys.items) {
    const row = body.insertRow();
    for (const text of [key.name, key.prefix, when(key.created_at), when(key.last_used_at)]) row.insertCell().textContent = text;
    const remove = document.createElement('button'); remove.className = 'plain'; remove.textContent = 'Delete';
    remove.onclick = () => api('DELETE', '/me/api-keys/' + key.id).then(load, (e) => show('error', e.message));
    row.insertCell().append(remove);
  }
}
document.getElementById('create').addEventListener('submit', (event) => { event.preventDefault();
  const name = new FormData(event.target).get('name');
  api('POST', '/me/api-keys', { name }).then((key) => { const t = document.getElementById('token'); t.hidden = false;
    t.textContent = 'Copy this key now, it is shown once: ' + key.token; event.target.reset(); show('error', ''); load(); },
    (e) => show('error', e.message)); });
document.getElementById('signout').onclick = () => api('DELETE', '/sessions/current').then(() => location.replace('/sign-in'));
load();
</script></body></html>`;

const workspaceSignInPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Opening the workspace · svc</title>
<meta name="viewport" content="width=device-width"><style>${style}</style></head><body><main>
<h1>Opening the workspace</h1><p id="status">Signing you in on the workspace address…</p><p class="error" id="error"></p></main>
<script>${shared}
const query = new URLSearchParams(location.search);
const host = query.get('host') || '';
const match = /^(?:ide-)?w([1-9][0-9]*)(?:-[0-9]+)?\\./.exec(host);
if (!match) { show('status', ''); show('error', 'This is not a workspace address.'); }
else api('POST', '/workspaces/' + match[1] + '/sign-in-links', { host, next: query.get('next') || '/' })
  .then((link) => location.replace(link.url), (e) => {
    if (/Authentication required/.test(e.message)) return location.replace('/sign-in?return=' + encodeURIComponent(location.pathname + location.search));
    show('status', ''); show('error', e.message); });
</script></body></html>`;

export function registerConsolePages(app: FastifyInstance, deps: ApiDeps): void {
  const page = (html: string) => async (_request: unknown, reply: { type: (t: string) => { header: (n: string, v: string) => { send: (b: string) => unknown } } }) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'none'").send(html);
  if (!registerConsoleApp(app, { log: deps.log })) {
    app.get('/sign-in', { config: { access: 'public' }, schema: { hide: true } }, page(signInPage));
    app.get('/', { config: { access: 'public' }, schema: { hide: true } }, page(homePage));
    app.get('/workspace-sign-in', { config: { access: 'public' }, schema: { hide: true } }, page(workspaceSignInPage));
  }
  app.register(import('./cli-login-page.ts'));
}
