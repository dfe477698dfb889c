// The nginx data plane's configuration (docs/router.md, "Data plane"): pure text from the settings of a start and
// the workspace servers (nginx-map.ts). The process that runs it is nginx.ts.
import path from 'node:path';
import { SIGN_IN_PATH, WORKSPACE_SESSION_COOKIE } from './access.ts';
import { SERVER_VERSION } from '../core/version.ts';
import { MAX_URL_LENGTH } from './routes.ts';
import { WAIT_PATH } from './waiting.ts';

/** The path on svc's internal listener that nginx asks about admission, with the secret of this start. */
export const AUTH_PATH = '/.svc-internal/admit';
export const ADMIT_SECRET_HEADER = 'x-svc-admit';
/**
 * Where nginx sends the requests it refuses itself (a malformed request line or header, a body length that is no
 * number, an address or header over its buffers), as `ERROR_PATH/<its status>`, with the secret of this start: svc
 * answers a problem on API hosts and the router's page on workspace hosts, as it does without nginx.
 */
export const ERROR_PATH = '/.svc-internal/error';
/** nginx's own codes it sends to ERROR_PATH (494: headers over large_client_header_buffers, 400 to the client). */
const NGINX_ERRORS = [400, 413, 414, 494];
const errorPages = () => NGINX_ERRORS.map((status) => `error_page ${status} = ${ERROR_PATH}/${status};\n`).join('');
/** The header nginx sets to the client's address; svc trusts it only from loopback. */
export const CLIENT_HEADER = 'x-real-ip';

export interface NginxSettings {
  /** Where clients connect. */
  listenHost: string;
  listenPort: number;
  /** svc's own listener on loopback. */
  internalPort: number;
  /** svc's Unix socket for event streams (src/router/events-socket.ts), when it has one. */
  eventsSocket?: string;
  /** svc's upstream timeout: nginx gives up on a directly served upstream after it too (svc then answers). */
  upstreamTimeoutSeconds: number;
  /** The directory for the configuration, pid file, logs and temp files. */
  dir: string;
  /** Proves to svc that an admission request comes from this nginx. */
  admitSecret: string;
  /** The user workers run as when svc runs as root. */
  workerUser?: string;
  /** svc's body limit: admissions of requests that may be over it are not cached (svc checks them each time). */
  bodyLimitBytes: number;
  /** Where nginx logs each request with its route (debugging), when set. */
  accessLog?: string;
  /** A loopback port where nginx tells which configuration generation its workers run (reloads are awaited). */
  controlPort: number;
  /** The editor's web files on this machine, served by nginx on editor hosts (see editorFilesLocation). */
  editorFiles?: EditorWebFiles;
}

/**
 * Files of the editor's web client that svc's machine holds itself (code-server from the tools directory): what
 * the editor serves under `urlPrefix` (a path naming its build, e.g. `/stable-<commit>/static/`) is `dir`.
 */
export interface EditorWebFiles {
  urlPrefix: string;
  dir: string;
}

/** How long nginx reuses svc's admission of a (credential, host, route, method, origin) combination. */
export const ADMISSION_CACHE_SECONDS = 5;


/** The Lua module (Debian's libnginx-mod-http-lua, with the NDK module it needs) that keeps admissions in memory. */
export const NGINX_MODULES = ['/usr/lib/nginx/modules/ndk_http_module.so', '/usr/lib/nginx/modules/ngx_http_lua_module.so'];

/** One worker per core, as Debian's own configuration (`auto`). */
const WORKERS = 'auto';

const quoteHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** The files of the configuration, in the data plane's directory. */
export function nginxFiles(dir: string) {
  return {
    config: path.join(dir, 'nginx.conf'),
    admission: path.join(dir, 'admission.lua'),
    workspaceInclude: path.join(dir, 'workspace-locations.conf'),
    directInclude: path.join(dir, 'direct.conf'),
    editorInclude: path.join(dir, 'editor-files.conf'),
  };
}

/**
 * The admission of a request nginx would serve itself (svc_admit() in every direct location). Requests
 * whose path is not in normal form (encoded, dot segments, double slashes) or that may be over svc's limits go to
 * svc, and so do upgrades (svc relays WebSockets to close them when their caller loses the right). svc's answer (204 admit, 401 send on to svc's router) for the same credentials, host, route, method and
 * origin is fresh ADMISSION_CACHE_SECONDS, in shared memory (never on disk). After that one request asks svc again
 * while the others use the previous answer, so a burst never waits for svc at once. The key starts with a
 * generation that svc moves (control port, `/forget`) when a key is deleted, access changes or the map is
 * reloaded: the next request asks svc. With strip, the rest of the request target as the client sent it goes on.
 */
export function admissionLua(settings: NginxSettings): string {
  const limitDigits = String(settings.bodyLimitBytes).length;
  // Loaded once (init_by_lua_file); every direct location calls svc_admit() in its access phase.
  return `local admitted = ngx.shared.svc_admitted
local var = ngx.var
local sub, byte = string.sub, string.byte
local time, capture, exec = ngx.time, ngx.location.capture, ngx.exec
local ask = { copy_all_vars = true }
function svc_admit()
  local uri = var.request_uri
  local path = var.uri
  local n = #path
  local length = var.content_length
  -- 63 is "?", 47 "/"
  if sub(uri, 1, n) ~= path or (#uri > n and byte(uri, n + 1) ~= 63) or #uri > ${MAX_URL_LENGTH} or (length and #length >= ${limitDigits}) then
    return exec("@svc")
  end
  -- An upgrade (the editor's WebSocket) is relayed by svc, which closes it when its caller loses the right.
  local upgrade = var.http_upgrade
  if upgrade and upgrade ~= "" then return exec("@svc") end
  local strip = var.svc_strip
  if strip ~= "" then
    local rest = sub(uri, #strip + 1)
    if byte(rest, 1) ~= 47 then rest = "/" .. rest end
    var.svc_target = rest
  end
  local key = (admitted:get("generation") or 0) .. "\\n" .. var.host .. "\\n" .. (var.http_svc_authorization or "") .. "\\n" ..
    (var.cookie_${WORKSPACE_SESSION_COOKIE} or "") .. "\\n" .. var.svc_route .. "\\n" .. var.request_method .. "\\n" ..
    (var.http_origin or "") .. "\\n" .. (var.http_sec_fetch_site or "")
  -- The value is svc's answer, the flags when it stops being fresh; entries unused for a minute go.
  local status, fresh_until = admitted:get(key)
  if status == nil or (fresh_until < time() and admitted:add(key .. "\\n#", true, 2)) then
    local answer = capture("${AUTH_PATH}-ask", ask)
    status = answer.status
    if status == 204 or status == 401 then admitted:set(key, status, 60, time() + ${ADMISSION_CACHE_SECONDS}) else admitted:delete(key) end
    admitted:delete(key .. "\\n#")
  end
  if status ~= 204 then return exec("@svc") end
end
-- The editor's web files (editorFilesLocation): a request with a query (the editor answers some with headers of
-- their own) goes to svc, which passes it to the editor; the others are served from disk once admitted.
function svc_editor_file()
  if var.is_args ~= "" then return exec("@svc") end
  return svc_admit()
end
-- A request nginx refused before it read any header (its request line): the Host and Accept that decide between
-- problem and page are still unread. They are read from the connection, svc is asked directly, and its answer goes
-- back as it came (nginx sends no header of its own on a raw connection).
local function header_in(raw, name)
  return string.match(raw, "^" .. name .. ":[ \\t]*([^\\r\\n]*)") or string.match(raw, "\\n" .. name .. ":[ \\t]*([^\\r\\n]*)") or ""
end
function svc_error_raw()
  if var.http_host then return end
  local client = ngx.req.socket(true)
  if not client then return end
  client:settimeout(100)
  local raw = client:receiveany(16384) or ""
  local host, accept = header_in(raw, "[Hh][Oo][Ss][Tt]"), header_in(raw, "[Aa][Cc][Cc][Ee][Pp][Tt]")
  local svc = ngx.socket.tcp()
  svc:settimeout(5000)
  local answer = ""
  if svc:connect("127.0.0.1", ${settings.internalPort}) then
    svc:send("GET " .. var.uri .. " HTTP/1.1\\r\\nHost: " .. host .. "\\r\\nAccept: " .. accept .. "\\r\\n${ADMIT_SECRET_HEADER}: ${settings.admitSecret}\\r\\nConnection: close\\r\\n\\r\\n")
    answer = svc:receive("*a") or ""
    svc:close()
  end
  client:send(answer ~= "" and answer or "HTTP/1.1 400 Bad Request\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n")
  return ngx.exit(ngx.OK)
end
`;
}

/**
 * nginx's own refusals go to svc (ERROR_PATH) as a plain GET without the request's body or headers, which are what
 * was wrong, but with its Host and Accept: svc chooses problem or page. When the request line itself was malformed
 * nginx has read no header yet; the Host is then looked up in the bytes it received.
 */
export function errorLocation(settings: NginxSettings): string {
  // A location by path, not a named one: nginx cannot go to a named location from a request line it could not read.
  return `${errorPages()}location ^~ ${ERROR_PATH}/ {
  internal;
  rewrite_by_lua_block { svc_error_raw() }
  proxy_pass http://svc$uri;
  proxy_method GET;
  # A client that half-closed after its request (as simple clients do) still gets the answer.
  proxy_ignore_client_abort on;
  proxy_pass_request_body off;
  proxy_pass_request_headers off;
  proxy_set_header Host $http_host;
  proxy_set_header Accept $http_accept;
  proxy_set_header Connection "";
  proxy_set_header ${ADMIT_SECRET_HEADER} ${settings.admitSecret};
}
`;
}

/** The locations every workspace server has: sign-in links and svc's fallback, and the admission subrequest. */
export function workspaceLocations(settings: NginxSettings): string {
  return `${errorLocation(settings)}location = ${SIGN_IN_PATH} {
  proxy_pass http://svc;
}
location = ${WAIT_PATH} {
  proxy_pass http://svc;
}
location @svc {
  proxy_pass http://svc$request_uri;
}
location = ${AUTH_PATH}-ask {
  internal;
  proxy_pass http://svc${AUTH_PATH};
  proxy_pass_request_body off;
  proxy_set_header Host $http_host;
  proxy_set_header Connection "";
  proxy_set_header Content-Length "";
  proxy_set_header X-Real-IP $remote_addr;
  proxy_set_header X-Svc-Method $request_method;
  proxy_set_header X-Svc-Uri $request_uri;
  proxy_set_header X-Svc-Length $content_length;
  proxy_set_header X-Svc-Route $svc_route;
  proxy_set_header X-Svc-Admit ${settings.admitSecret};
}
`;
}

/** The directives of a location nginx serves itself: admission, then the upstream (its failures go to svc). */
export function directLocation(settings: NginxSettings): string {
  return `access_by_lua_block { svc_admit() }
error_page 500 502 503 504 = @svc;
${errorPages()}
proxy_read_timeout ${settings.upstreamTimeoutSeconds}s;
proxy_set_header Host $http_host;
proxy_set_header Upgrade $http_upgrade;
proxy_set_header Connection $svc_connection;
proxy_set_header Svc-Authorization "";
proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
proxy_set_header X-Forwarded-Host $http_host;
proxy_set_header X-Forwarded-Proto $scheme;
proxy_set_header Cookie $svc_cookie;
`;
}

/** What the editor's web files are served as (nginx has no types of its own in this configuration). */
const EDITOR_FILE_TYPES: Record<string, string[]> = {
  'text/html': ['html', 'htm'],
  'text/css': ['css'],
  'text/javascript': ['js', 'mjs'],
  'application/json': ['json', 'map'],
  'image/svg+xml': ['svg'],
  'image/png': ['png'],
  'image/jpeg': ['jpg', 'jpeg'],
  'image/gif': ['gif'],
  'image/x-icon': ['ico'],
  'font/ttf': ['ttf'],
  'font/woff': ['woff'],
  'font/woff2': ['woff2'],
  'application/wasm': ['wasm'],
  'text/plain': ['txt', 'md'],
};

/**
 * The location body of the editor's web files on an editor host (nginx-map.ts sets the route first): admitted as
 * the rest of the host, then served from `dir` with the `.gz` beside each file when there is one (written once by
 * scripts/setup-editor.sh; others are compressed on the fly) and cached for good, since the path names the build. A
 * file that is not there, a method other than GET or HEAD, a query, and failures go to svc, which asks the editor.
 */
export function editorFilesLocation(settings: NginxSettings): string {
  const files = settings.editorFiles!;
  const dir = files.dir.endsWith('/') ? files.dir : `${files.dir}/`;
  const types = Object.entries(EDITOR_FILE_TYPES).map(([type, extensions]) => `  ${type} ${extensions.join(' ')};`).join('\n');
  return `access_by_lua_block { svc_editor_file() }
alias "${dir}";
default_type application/octet-stream;
types {
${types}
}
charset utf-8;
charset_types text/css text/javascript application/json image/svg+xml text/plain;
gzip_static on;
# A file code-server does not ship (its optional vsda) is asked of code-server, not logged as an error.
log_not_found off;
error_page 403 404 405 500 502 503 504 = @svc;
${errorPages()}add_header Cache-Control "public, max-age=31536000, immutable";
add_header Svc-Version "${SERVER_VERSION}" always;
`;
}

/** `listen` of the public servers. */
export const listenOf = (settings: Pick<NginxSettings, 'listenHost' | 'listenPort'>) => `${quoteHost(settings.listenHost)}:${settings.listenPort}`;

/** The whole configuration; `workspaces` is the generated part (upstreams and servers, see nginx-map.ts). */
export function nginxConfig(settings: NginxSettings, workspaces: string, generation: number): string {
  const { dir } = settings;
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `  ${name}_temp_path ${path.join(dir, 'temp', name)};`).join('\n');
  return `${NGINX_MODULES.map((module) => `load_module ${module};\n`).join('')}${settings.workerUser ? `user ${settings.workerUser};\n` : ''}worker_processes ${WORKERS};
daemon off;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  log_format svc '$host $request_uri $status route=$svc_route upstream=$upstream_addr';
  ${settings.accessLog ? `access_log ${settings.accessLog} svc;` : 'access_log off;'}
${temp}
  # svc keeps its own limits and answers them with its pages.
  client_max_body_size 0;
  large_client_header_buffers 4 64k;
  proxy_http_version 1.1;
  # Text answers that arrive uncompressed (the editor's scripts and styles, tens of MB on its first load; svc's JSON)
  # leave compressed when the client accepts it; event streams are not in the list and stay as they are.
  gzip on;
  gzip_proxied any;
  gzip_vary on;
  gzip_comp_level 2;
  gzip_min_length 1024;
  gzip_types application/javascript text/javascript text/css application/json image/svg+xml application/wasm text/plain application/xml;
  proxy_buffering off;
  proxy_request_buffering off;
  proxy_read_timeout 3600s;
  proxy_send_timeout 3600s;
  proxy_set_header Host $http_host;
  proxy_set_header Upgrade $http_upgrade;
  proxy_set_header Connection $svc_connection;
  proxy_set_header X-Real-IP $remote_addr;
  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
  proxy_set_header X-Forwarded-Host "";
  # nginx's own scheme, never the client's header: svc's router knows a request came over TLS.
  proxy_set_header X-Forwarded-Proto $scheme;
  # Every answer carries svc's release, nginx's own and those of the replicas it serves included (svc's is replaced).
  proxy_hide_header Svc-Version;
  add_header Svc-Version "${SERVER_VERSION}" always;
  map $http_upgrade $svc_connection { default upgrade; "" ""; }
  # The router's own cookie never reaches the application.
  map $http_cookie $svc_cookie {
    default $http_cookie;
    "~^${WORKSPACE_SESSION_COOKIE}=[^;]*$" "";
    "~^${WORKSPACE_SESSION_COOKIE}=[^;]*;\\s*(?<svc_c1>.*)$" "$svc_c1";
    "~^(?<svc_c1>.*?);\\s*${WORKSPACE_SESSION_COOKIE}=[^;]*(?<svc_c2>.*)$" "$svc_c1$svc_c2";
  }
  lua_shared_dict svc_admitted 16m;
  init_by_lua_file ${nginxFiles(dir).admission};
  upstream svc { server 127.0.0.1:${settings.internalPort}; keepalive 64; }
${settings.eventsSocket ? `  upstream svc_events { server unix:${settings.eventsSocket}; }\n` : ''}
  # Console, API, and every host nginx does not serve itself: svc.
  server {
    listen ${listenOf(settings)} default_server;
    server_name _;
${toSvc(settings, '')}  }
${workspaces}
  # svc's control port: which configuration the workers run, and forgetting every admission.
  server {
    listen 127.0.0.1:${settings.controlPort};
    location = /generation { return 200 "${generation}"; }
    location = /forget {
      content_by_lua_block { ngx.print((ngx.shared.svc_admitted:incr("generation", 1, 0))) }
    }
    location / { return 404; }
  }
}
`;
}

/** The locations of a server whose every request goes to svc (nginx's own refusals too); `extra` directives. */
export function toSvc(settings: NginxSettings, extra: string): string {
  const location = (match: string, upstream: string) => `    location ${match} {
      set $svc_route "";
      set $svc_strip "";
      set $svc_target "";
      proxy_pass http://${upstream};
${extra}    }
`;
  // Event streams over svc's Unix socket: each event is written once per stream, and there it costs half.
  return `${errorLocation(settings).replace(/^/gm, '    ')}
${settings.eventsSocket ? location('= /api/v1/events', 'svc_events') : ''}${location('/', 'svc')}`;
}
