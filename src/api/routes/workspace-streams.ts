// A shell in a workspace and ports forwarded into it: `GET /workspaces/{ws}/exec`, `GET /workspaces/{ws}/port-forward`
// and its SSH endpoint `GET /workspaces/{ws}/ssh` (issue 38),
// each a WebSocket upgrade with the caller's key or session and `workspace.exec`. Before the upgrade the caller is
// checked, a sleeping workspace woken, the pod's stream opened and the audit entry written, so that every refusal is a
// problem over plain HTTP; after it the frames are relayed (stream-relay.ts). Channel protocols: src/core/channel-protocol.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { WebSocket } from 'ws';
import { requirePermission } from '../../auth/access.ts';
import { EXEC_PROTOCOL, PORT_FORWARD_PROTOCOL, SSH_PROTOCOL } from '../../core/channel-protocol.ts';
import { problem, Problem } from '../../core/problems.ts';
import type { PodTarget } from '../../runtime/driver.ts';
import { RuntimeFailure } from '../../runtime/driver.ts';
import { insertAuditEntry } from '../../store/audit.ts';
import { findDeployedLandscape } from '../../store/landscapes.ts';
import { listVariables } from '../../store/variables.ts';
import { managedShellEnv } from '../../managed/connection-values.ts';
import { findWorkspace, type WorkspaceRow } from '../../store/workspaces.ts';
import type { Use } from '../../workspaces/activity.ts';
import { workspaceRef } from '../../workspaces/operations.ts';
import { wakeAndWait } from '../../workspaces/wake.ts';
import type { ApiDeps, RequestWithParams } from '../context.ts';
import { holdMessages, relayStreams } from '../stream-relay.ts';
import { guardStream } from '../stream-rights.ts';
import { revocationCloseCode } from '../../auth/stream-guard.ts';
import { unknownService } from './services.ts';
import { workspaceAccess } from './workspaces.ts';
import { Id, ServiceName } from '../schemas.ts';
import { restartsFrom } from '../../workspaces/editor-watch.ts';
import { gitIdentityOf } from '../../git/credentials.ts';
import { workspaceSshHostKey } from '../../workspaces/ssh-host-key.ts';

const WAKE_TIMEOUT_MS = 120_000;

const Replica = Type.Integer({ minimum: 0, maximum: 99, description: 'replica index of --service; default 0' });
const Dimension = Type.Integer({ minimum: 1, maximum: 1000 });

const ExecQuery = Type.Object(
  {
    command: Type.Optional(Type.Array(Type.String({ maxLength: 65536 }), { maxItems: 1024, description: 'argv (repeat the parameter); a login shell when absent' })),
    tty: Type.Optional(Type.Boolean({ description: 'a pseudo-terminal (stdout and stderr together)' })),
    stdin: Type.Optional(Type.Boolean({ description: 'the caller sends stdin on channel 0' })),
    cols: Type.Optional(Dimension),
    rows: Type.Optional(Dimension),
    service: Type.Optional(ServiceName),
    replica: Type.Optional(Replica),
  },
  { additionalProperties: false },
);

const ForwardQuery = Type.Object(
  {
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    service: Type.Optional(ServiceName),
    replica: Type.Optional(Replica),
  },
  { additionalProperties: false },
);

const tags = ['workspaces'];

/**
 * The document's mark of a WebSocket route (OpenAPI has no word for one): `x-svc-websocket: { subprotocol }`. The
 * SDK reads it to list the stream routes and the subprotocol each speaks (sdk/src/streams.ts).
 */
export const WEBSOCKET_EXTENSION = 'x-svc-websocket';

const streamDescription = (protocol: string, channels: string) =>
  `Send GET with Upgrade: websocket and Sec-WebSocket-Protocol: ${protocol}, authenticated like any request ` +
  `(Authorization or Svc-Authorization, or the session cookie). Every refusal (no upgrade, no such workspace, ` +
  `no workspace.exec, a workspace that cannot run) is answered before the upgrade, as a problem. A sleeping ` +
  `workspace is woken first. After 101 each binary message is one frame: a channel byte, then the data; ${channels}.`;

const upgradeHeaders = (protocol: string) =>
  Type.Object({
    upgrade: Type.Optional(Type.String({ description: 'websocket' })),
    'sec-websocket-protocol': Type.Optional(Type.String({ description: `the subprotocols offered; must include ${protocol}` })),
  });

const switching = (protocol: string) => Type.Null({ description: `Switching Protocols: the WebSocket speaks ${protocol}` });

/** The answer to a plain GET of a stream route: it only takes an upgrade. */
function refuseWithoutUpgrade(): never {
  throw problem('bad-request', 400, 'This address takes a WebSocket upgrade (Upgrade: websocket).');
}

type ExecQueryValue = { command?: string[]; tty?: boolean; stdin?: boolean; cols?: number; rows?: number; service?: string; replica?: number };
type ForwardQueryValue = { port: number; service?: string; replica?: number };

interface Admitted {
  row: WorkspaceRow;
  pod: WebSocket;
  held: () => Buffer[];
}

/** Where a stream goes: the editor pod, a replica, or (port forwarding) a managed service dialled from the editor pod. */
async function targetOf(deps: ApiDeps, row: WorkspaceRow, service: string | undefined, replica: number | undefined, forwarding: boolean): Promise<{ pod: PodTarget; host: string }> {
  if (service === undefined) {
    if (replica !== undefined) throw problem('validation', 422, 'replica needs service', { errors: [{ pointer: '/replica', message: 'needs service', in: 'query' }] });
    return { pod: { kind: 'editor' }, host: '127.0.0.1' };
  }
  const deployed = await findDeployedLandscape(deps.pool, row.id);
  const found = deployed && !deployed.torn_down ? deployed.normal.services[service] : undefined;
  if (!found) throw unknownService(row, deployed, service);
  if (found.type === 'managed') {
    if (!forwarding) throw problem('conflict', 409, `${service} is a managed service: it has no shell here; forward its port instead (svc port-forward WS ${service}:PORT).`);
    return { pod: { kind: 'editor' }, host: service };
  }
  if (found.type !== 'steps' && found.type !== 'container') throw problem('conflict', 409, `${service} is a ${found.type} service: it runs no pod of this workspace.`);
  return { pod: { kind: 'replica', service, index: replica ?? 0 }, host: '127.0.0.1' };
}

/** The workspace running (woken when asleep), or the problem of spec 7 that says why not. */
async function runningWorkspace(deps: ApiDeps, request: FastifyRequest, row: WorkspaceRow): Promise<WorkspaceRow> {
  const waited = await wakeAndWait(deps.pool, row, request.principal!.user.id, () => deps.clock.now(), (id) => findWorkspace(deps.pool, id), WAKE_TIMEOUT_MS, deps.config.plans);
  switch (waited.kind) {
    case 'running':
      return waited.row;
    case 'blocked':
      throw problem('wake-blocked', 503, waited.blocker.reason, { headers: { 'retry-after': String(waited.blocker.retryAfterSeconds) } });
    case 'still-waking':
      throw problem('wake-blocked', 503, 'The workspace is still waking up; try again in a moment.', { headers: { 'retry-after': '5' } });
    case 'not-running':
      // one story for every client: the status the console and `svc ws list` show, and what comes next
      if (restartsFrom(waited.row)) throw problem('workspace-not-running', 409, `${waited.row.status_detail}. It restarts by itself; try again in a moment.`);
      throw problem('workspace-not-running', 409, waited.row.state === 'stopped' ? `${waited.row.status_detail}: start it first.` : `It is ${waited.row.state.replace('_', ' ')}: ${waited.row.status_detail}.`);
  }
}

function podProblem(error: unknown): Problem {
  if (!(error instanceof RuntimeFailure)) return error as Problem;
  // the pod ended after the workspace was found running: its editor restarts (editor-watch.ts); never the title twice
  if (error.reason === 'The workspace is not running') return problem('workspace-not-running', 409, 'Its editor pod has just ended; svc restarts it by itself, try again in a moment.');
  if (/is not running$/.test(error.reason)) return problem('conflict', 409, `${error.reason}.`);
  return problem('unavailable', 503, error.reason, { headers: { 'retry-after': '5' } });
}

export function registerWorkspaceStreamRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const admitted = new WeakMap<FastifyRequest, Admitted>();

  // The target names the workspace and the pod, never the command: a command line may carry a password.
  const audit = (request: FastifyRequest, action: string, outcome: number) =>
    insertAuditEntry(deps.pool, {
      at: deps.clock.now(), actor_id: request.principal?.user.id ?? null, action, method: 'GET',
      target: auditTarget(request), team_id: request.auditTeamId ?? null, outcome, address: request.ip,
    }).catch((error: Error) => deps.log(`audit entry lost for ${action}: ${error.message}`));

  /** Checks, wakes and opens the pod's stream before the upgrade; refusals are audited with their status. */
  const admit = (action: string, protocol: string, open: (request: FastifyRequest, row: WorkspaceRow) => Promise<WebSocket>) => async (request: FastifyRequest) => {
    if (!request.ws) refuseWithoutUpgrade();
    const offered = String(request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    if (!offered.includes(protocol)) throw problem('bad-request', 400, `Offer the subprotocol ${protocol} (Sec-WebSocket-Protocol).`);
    try {
      // the upgrade's admission runs before the route's handler, on the request as Fastify types it for hooks
      const { row, access } = await workspaceAccess(deps, request as RequestWithParams<{ ws: number }>);
      requirePermission(access.permissions, 'workspace.exec');
      const running = await runningWorkspace(deps, request, row);
      const pod = await open(request, running).catch((error: unknown) => {
        throw podProblem(error);
      });
      admitted.set(request, { row: running, pod, held: holdMessages(pod) });
      pod.resume();
      // a caller that leaves before the upgrade finishes leaves no stream behind
      request.raw.socket.once('close', () => pod.readyState === pod.OPEN && pod.close(1001));
      await audit(request, action, 101);
    } catch (error) {
      if (error instanceof Problem && error.status !== 404) await audit(request, action, error.status);
      throw error;
    }
  };

  /** Relays the frames while the caller keeps workspace.exec; a caller who loses it is closed with 4401 or 4403. */
  const relay = (socket: WebSocket, request: FastifyRequest) => {
    const stream = admitted.get(request)!;
    // counted as use while open, not only at its start (the idle timeout, GET /workspaces/{ws}/activity)
    const inUse = deps.router.uses.holdOpen(stream.row.id, streamUseOf(request));
    let forget = () => undefined as void;
    const close = relayStreams(socket, stream.pod, stream.held(), { onClose: () => (inUse(), forget()) });
    if (socket.readyState !== socket.OPEN) return;
    forget = guardStream(deps, request, { workspaceId: stream.row.id, teamId: stream.row.team_id, permission: 'workspace.exec' }, (revocation) =>
      close(revocationCloseCode(revocation), revocation.reason), true,
    );
  };

  app.route({
    method: 'GET',
    url: '/workspaces/:ws/exec',
    config: { access: 'user' },
    schema: {
      summary: `A command or shell in the workspace: a WebSocket upgrade with the subprotocol ${EXEC_PROTOCOL}`,
      description: streamDescription(EXEC_PROTOCOL, 'channels 0 stdin, 1 stdout, 2 stderr, 3 the final status (a Kubernetes Status as JSON), 4 terminal size ({"Width":80,"Height":24}), 255 close a stream ([255, 0] ends stdin)'),
      tags,
      params: Type.Object({ ws: Id }),
      querystring: ExecQuery,
      headers: upgradeHeaders(EXEC_PROTOCOL),
      response: { 101: switching(EXEC_PROTOCOL) },
      [WEBSOCKET_EXTENSION]: { subprotocol: EXEC_PROTOCOL },
    },
    preHandler: admit('workspace.exec', EXEC_PROTOCOL, async (request, row) => {
      const query = request.query as ExecQueryValue;
      const target = await targetOf(deps, row, query.service, query.replica, false);
      // the managed services' connection values as the last Sync gave them, in every shell; the workspace's variables
      // over them in the editor pod; in a replica only the SVC_MANAGED_* ones, never over the service's own env
      // (docs/managed.md, "Where developers work")
      const env = target.pod.kind === 'editor'
        ? await editorShellEnv(deps, row.id)
        : Object.fromEntries(Object.entries(await managedShellEnv(deps.pool, deps.secrets, row.id)).filter(([name]) => name.startsWith('SVC_MANAGED_')));
      const size = query.cols && query.rows ? { cols: query.cols, rows: query.rows } : undefined;
      // git in the session acts as the person at the keyboard (docs/decisions.md)
      const git = await gitIdentityOf(deps.pool, deps.secrets, request.principal!.user);
      return deps.driver.openExec(workspaceRef(row), target.pod, { command: query.command ?? [], tty: query.tty ?? false, stdin: query.stdin ?? false, size, env, git });
    }),
    wsHandler: relay,
    handler: refuseWithoutUpgrade,
  });

  app.route({
    method: 'GET',
    url: '/workspaces/:ws/port-forward',
    config: { access: 'user' },
    schema: {
      summary: `A port of the workspace forwarded: a WebSocket upgrade with the subprotocol ${PORT_FORWARD_PROTOCOL}`,
      description: streamDescription(PORT_FORWARD_PROTOCOL, 'channels 0 data, 1 error text; the first frame the server sends on each channel is the port as two bytes, little-endian'),
      tags,
      params: Type.Object({ ws: Id }),
      querystring: ForwardQuery,
      headers: upgradeHeaders(PORT_FORWARD_PROTOCOL),
      response: { 101: switching(PORT_FORWARD_PROTOCOL) },
      [WEBSOCKET_EXTENSION]: { subprotocol: PORT_FORWARD_PROTOCOL },
    },
    preHandler: admit('workspace.port_forward', PORT_FORWARD_PROTOCOL, async (request, row) => {
      const query = request.query as ForwardQueryValue;
      const target = await targetOf(deps, row, query.service, query.replica, true);
      return deps.driver.openPortForward(workspaceRef(row), target.pod, { host: target.host, port: query.port });
    }),
    wsHandler: relay,
    handler: refuseWithoutUpgrade,
  });

  app.route({
    method: 'GET',
    url: '/workspaces/:ws/ssh',
    config: { access: 'user' },
    schema: {
      summary: `The workspace's SSH endpoint (svc ssh --stdio, ProxyCommand): a WebSocket upgrade with the subprotocol ${SSH_PROTOCOL}`,
      description: streamDescription(SSH_PROTOCOL, 'there are no channels here: each message carries the next bytes of one SSH connection to the editor pod, whose host key is GET /workspaces/{ws}/ssh-host'),
      tags,
      params: Type.Object({ ws: Id }),
      headers: upgradeHeaders(SSH_PROTOCOL),
      response: { 101: switching(SSH_PROTOCOL) },
      [WEBSOCKET_EXTENSION]: { subprotocol: SSH_PROTOCOL },
    },
    preHandler: admit('workspace.ssh', SSH_PROTOCOL, async (request, row) => {
      // the same session as svc ssh: variables, managed values and the caller's git identity (docs/decisions.md)
      const hostKey = await workspaceSshHostKey(deps.pool, deps.secrets, row.id, deps.clock.now());
      const git = await gitIdentityOf(deps.pool, deps.secrets, request.principal!.user);
      return deps.driver.openSsh(workspaceRef(row), { hostKey: hostKey.privateKey, env: await editorShellEnv(deps, row.id), git });
    }),
    wsHandler: relay,
    handler: refuseWithoutUpgrade,
  });
}

/** What a shell of the editor pod gets: the managed services' connection values, the workspace's variables over them. */
async function editorShellEnv(deps: ApiDeps, workspaceId: number): Promise<Record<string, string>> {
  const managed = await managedShellEnv(deps.pool, deps.secrets, workspaceId);
  return { ...managed, ...Object.fromEntries((await listVariables(deps.pool, workspaceId)).map((v) => [v.name, v.value])) };
}

/** What a stream counts as: a terminal (an exec with a tty), an exec, a port-forward or ssh, and where it goes. */
function streamUseOf(request: FastifyRequest): Use {
  const path = request.url.split('?')[0];
  const { service, replica, port, tty } = request.query as { service?: string; replica?: number; port?: number; tty?: boolean };
  const where = service === undefined ? 'editor' : replica === undefined ? service : `${service}/${replica}`;
  if (path.endsWith('/ssh')) return { kind: 'ssh', address: '' };
  if (path.endsWith('/port-forward')) return { kind: 'port-forward', address: `${where}:${port ?? ''}` };
  return { kind: tty ? 'terminal' : 'exec', address: where };
}

function auditTarget(request: FastifyRequest): string {
  const path = request.url.split('?')[0].replace(/^\/api\/v1/, '');
  const { service, replica, port } = request.query as { service?: string; replica?: number; port?: number };
  const query = new URLSearchParams();
  if (service !== undefined) query.set('service', service);
  if (replica !== undefined) query.set('replica', String(replica));
  if (port !== undefined) query.set('port', String(port));
  return query.size ? `${path}?${query}` : path;
}

/** Which subprotocol the API agrees to: the one the route speaks, when the caller offers it. */
export function streamProtocolOf(url: string, offered: Set<string>): string | false {
  const wanted = /\/exec(\?|$)/.test(url) ? EXEC_PROTOCOL : /\/port-forward(\?|$)/.test(url) ? PORT_FORWARD_PROTOCOL : /\/ssh(\?|$)/.test(url) ? SSH_PROTOCOL : undefined;
  return wanted && offered.has(wanted) ? wanted : false;
}
