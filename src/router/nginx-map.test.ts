import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { normalizeLandscape, parseLandscape } from '../landscape/index.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { hostTarget } from './hosts.ts';
import { admissionLua, directLocation, editorFilesLocation, NGINX_MODULES, nginxConfig, nginxFiles, workspaceLocations, type NginxSettings } from './nginx-config.ts';
import { directRouteFor, editorRouteName, workspaceConfig, workspaceServers, type WorkspaceLocation } from './nginx-map.ts';
import { landscapeRoutes, matchRoute } from './routes.ts';
import type { ServiceState, WorkspaceRouting } from './workspace-routes.ts';

const landscape = normalizeLandscape(
  parseLandscape(`schema: svc/v1
services:
  web:
    type: steps
    steps: [{ run: web }]
    ports:
      - port: 8080
        routes: [{ path: / }]
      - port: 9000
        public: true
  api:
    type: steps
    steps: [{ run: api }]
    ports:
      - port: 3000
        routes: [{ path: /api, strip: true }, { path: /api/v2/admin }]
  lazy:
    type: steps
    steps: [{ run: lazy }]
    ports:
      - port: 4000
        routes: [{ path: /lazy, strip: true }]
  docs:
    type: forward
    target: https://docs.example.com/base
    routes: [{ path: /docs }]
`).landscape!,
);

const ready = (...hosts: string[]): ServiceState => ({ status: 'running', running: true, ready: hosts });
const routing = (state = 'running'): WorkspaceRouting => ({
  row: { id: 12, state, editor_host: '10.0.0.9', editor_port: 13337 } as WorkspaceRow,
  routes: landscapeRoutes(landscape),
  services: new Map([
    ['web', ready('10.0.0.2', '10.0.0.3')],
    ['api', ready('10.0.0.4')],
    ['lazy', { status: 'sleeping', running: true, ready: [] }],
  ]),
});

/** How nginx picks a location: an exact match, else the longest prefix. */
function locate(locations: WorkspaceLocation[], uri: string): WorkspaceLocation | undefined {
  const path = uri.split('?')[0];
  const exact = locations.find((l) => l.match === `= ${path}`);
  if (exact) return exact;
  return locations.filter((l) => !l.match.startsWith('= ') && path.startsWith(l.match)).sort((a, b) => b.match.length - a.match.length)[0];
}

/** What the admission sends on with strip (admissionLua): the rest of the request target, with a leading slash. */
const stripped = (uri: string, strip: string) => (uri.slice(strip.length).startsWith('/') ? uri.slice(strip.length) : `/${uri.slice(strip.length)}`);

const serverFor = (r: WorkspaceRouting, host: string) => workspaceServers(r, 'localhost').servers.find((s) => s.host === host);

test('the workspace server sends each path where the router would, strip and segment boundaries included', () => {
  const r = routing();
  const dev = serverFor(r, 'w12.localhost')!;
  for (const uri of ['/', '/x?y=1', '/api', '/api?q=1', '/api/items?page=2', '/apix', '/api/v2/admin/x', '/api/v2/adminx', '/docs/a', '/lazy/x']) {
    const match = matchRoute(r.routes.dev, uri)!;
    const location = locate(dev.locations, uri)!;
    assert.equal(location.route, directRouteFor(r, hostTarget('w12.localhost', 'localhost', 'console'), uri), uri);
    if (location.route) assert.equal(location.strip ? stripped(uri, location.strip) : uri, match.upstreamTarget, uri);
  }
  const published = serverFor(r, 'w12-9000.localhost')!;
  assert.match(locate(published.locations, '/p?q')!.route!, /^svc_w12_web_9000_/);
  assert.equal(serverFor(r, 'w12-8080.localhost'), undefined, 'an unpublished port is left to svc');
});

test('forward routes, sleeping services, unusual paths and workspaces not running are left to svc', () => {
  const dev = serverFor(routing(), 'w12.localhost')!;
  assert.equal(locate(dev.locations, '/docs/a')!.route, undefined);
  assert.equal(locate(dev.locations, '/lazy/a')!.route, undefined);
  assert.deepEqual(workspaceServers(routing('sleeping'), 'localhost').servers, []);
  const unusual = routing();
  unusual.routes = { ...unusual.routes, dev: [...unusual.routes.dev, { path: '/a%20b', strip: false, target: { kind: 'service', service: 'web', port: 8080 } }] };
  assert.equal(serverFor(unusual, 'w12.localhost'), undefined);
  assert.ok(serverFor(unusual, 'w12-9000.localhost'));
});

test("the editor's host goes straight to the editor's address, under a name that changes with it", () => {
  const r = routing();
  const ide = serverFor(r, 'ide-w12.localhost')!;
  assert.equal(ide.editor, true);
  const target = hostTarget('ide-w12.localhost', 'localhost', 'console');
  for (const uri of ['/', '/?folder=/data/app', '/stable-abc/static/out/x.js']) {
    assert.equal(locate(ide.locations, uri)!.route, directRouteFor(r, target, uri), uri);
  }
  const name = editorRouteName(r.row)!;
  assert.match(name, /^svc_e12_[0-9a-f]{10}$/);
  assert.deepEqual(workspaceServers(r, 'localhost').upstreams.find((u) => u.name === name)?.servers, ['10.0.0.9:13337']);
  assert.notEqual(editorRouteName({ ...r.row, editor_port: 13338 }), name, 'a restarted editor gets a new group');
  const absent = routing();
  absent.row = { ...absent.row, editor_host: null, editor_port: null };
  assert.equal(serverFor(absent, 'ide-w12.localhost'), undefined, 'no address: svc answers');
  assert.equal(directRouteFor(absent, target, '/'), undefined);
  assert.equal(directRouteFor(routing('waking_up'), target, '/'), undefined, 'a waking editor is held by svc');
});

const settings = { domain: 'localhost', listen: '127.0.0.1:8080', workspaceInclude: '/d/workspace.conf', directInclude: '/d/direct.conf' };

test('an upstream group lists every ready replica and is renamed when they change', () => {
  const before = workspaceConfig([routing()], settings);
  assert.match(before, /upstream svc_w12_web_8080_\w+ \{ server 10\.0\.0\.2:8080; server 10\.0\.0\.3:8080; keepalive 256; \}/);
  assert.match(before, /server_name w12\.localhost;\n    include \/d\/workspace\.conf;/);
  assert.match(before, /location = "\/api" \{\n      set \$svc_route svc_w12_api_3000_\w+;\n      set \$svc_strip "\/api";\n      include \/d\/direct\.conf;\n      proxy_pass http:\/\/svc_w12_api_3000_\w+\$svc_target;/);
  assert.match(before, /location "\/docs\/" \{\n      proxy_pass http:\/\/svc;/);
  const changed = routing();
  changed.services.set('web', ready('10.0.0.2'));
  const name = (text: string) => /svc_w12_web_8080_\w+/.exec(text)![0];
  assert.notEqual(name(workspaceConfig([changed], settings)), name(before));
});

test("the editor's web files are served from this machine on its host only, when svc knows them", () => {
  const editorFiles = { urlPrefix: '/stable-abc123/static/', include: '/d/editor-files.conf' };
  const text = workspaceConfig([routing()], { ...settings, editorFiles });
  const route = editorRouteName(routing().row)!;
  assert.match(text, new RegExp(`upstream ${route} \\{ server 10\\.0\\.0\\.9:13337; keepalive 256; \\}`));
  const ide = text.slice(text.indexOf('server_name ide-w12.localhost;'));
  assert.ok(ide.includes(`location ^~ "/stable-abc123/static/" {\n      set $svc_route ${route};\n      set $svc_strip "";\n      include /d/editor-files.conf;\n    }`), ide);
  assert.equal(text.match(/stable-abc123/g)?.length, 1, 'on no other host');
  assert.ok(!workspaceConfig([routing()], settings).includes('static/'), 'not without the files');
  const files = editorFilesLocation({ editorFiles: { urlPrefix: '/stable-abc123/static/', dir: '/tools/lib/vscode' } } as NginxSettings);
  assert.match(files, /alias "\/tools\/lib\/vscode\/";/);
  assert.match(files, /gzip_static on;/);
  assert.match(files, /add_header Cache-Control "public, max-age=31536000, immutable";/);
  assert.match(files, /error_page 403 404 405 500 502 503 504 = @svc;/);
  assert.match(files, /text\/javascript js mjs;/);
});

test('nginx accepts the whole configuration', { skip: NGINX_MODULES.every((m) => existsSync(m)) ? false : 'nginx or its Lua module is not installed' }, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-nginx-test-'));
  try {
    const nginx: NginxSettings = { listenHost: '127.0.0.1', listenPort: 18999, internalPort: 18998, upstreamTimeoutSeconds: 60, dir, admitSecret: 'secret', bodyLimitBytes: 1024, controlPort: 18997, eventsSocket: path.join(dir, 'events.sock') };
    const files = nginxFiles(dir);
    await writeFile(files.admission, admissionLua(nginx));
    await writeFile(files.workspaceInclude, workspaceLocations(nginx));
    await writeFile(files.directInclude, directLocation(nginx));
    await writeFile(files.editorInclude, editorFilesLocation({ ...nginx, editorFiles: { urlPrefix: '/stable-abc123/static/', dir } }));
    const editorFiles = { urlPrefix: '/stable-abc123/static/', include: files.editorInclude };
    const workspaces = workspaceConfig([routing()], { ...settings, listen: '127.0.0.1:18999', workspaceInclude: files.workspaceInclude, directInclude: files.directInclude, editorFiles });
    await writeFile(files.config, nginxConfig(nginx, workspaces, 1));
    for (const name of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(path.join(dir, 'temp', name), { recursive: true });
    await promisify(execFile)('nginx', ['-t', '-q', '-p', dir, '-c', files.config]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
