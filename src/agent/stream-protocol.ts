// What the runtime driver asks of an agent's streams: a shell or command (`/exec`) and a forwarded TCP connection
// (`/port-forward`), each a WebSocket upgrade of the agent's control port speaking the channel protocols of
// src/core/channel-protocol.ts. Only the server may open them: it sends the pod's token (made by the driver, given to
// the agent in a file or the replica's settings, never on a command line) as a bearer token.
import { isDimension, type TerminalSize } from '../core/channel-protocol.ts';

export const AGENT_EXEC_PATH = '/exec';
export const AGENT_PORT_FORWARD_PATH = '/port-forward';
/** One SSH connection served by the agent's SSH server (ssh-server.ts); the env and git headers as for exec. */
export const AGENT_SSH_PATH = '/ssh';
/** The workspace's SSH host key (OpenSSH private key format), as base64url; held in the agent's memory for the session only. */
export const SSH_HOST_KEY_HEADER = 'svc-ssh-host-key';
/**
 * The server's channel for the editor's git credentials (src/agent/editor-git.ts): held open by each server that
 * relays editor WebSockets of the workspace; every text message is `{"people":[{"userId","identity"}]}`, the people
 * with an open editor WebSocket through that server. Its close forgets them.
 */
export const AGENT_EDITOR_GIT_PATH = '/editor-git';
export const EDITOR_GIT_PROTOCOL = 'svc.editor-git.v1';
/** The workspace's variables for the command, as base64url JSON: they may be longer than a query string allows. */
export const EXEC_ENV_HEADER = 'svc-exec-env';
/** The git identity of the person at the keyboard (ExecGitIdentity), as base64url JSON; held in the agent's memory only. */
export const EXEC_GIT_HEADER = 'svc-exec-git';
/** The agent reads up to this much of an upgrade's headers (the variables ride in one). */
export const AGENT_MAX_HEADER_BYTES = 1024 * 1024;

export interface AgentExecRequest {
  /** argv, run through a login shell (`bash -lc 'exec "$@"'`); an interactive login shell when empty. */
  command: string[];
  /** A terminal (stdout and stderr both on channel 1), sized `size`. */
  tty: boolean;
  /** Whether the caller sends stdin; without it the command reads an empty stdin. */
  stdin: boolean;
  size?: TerminalSize;
  env: Record<string, string>;
  /** Whose git credentials the session's git and ssh use (git-sockets.ts); none: the pod's own setup. */
  git?: ExecGitIdentity;
}

/** The person at the keyboard, for git: their name and e-mail, HTTPS credentials per host, SSH key (PKCS#8 PEM). */
export interface ExecGitIdentity {
  name: string;
  email: string;
  credentials: Array<{ host: string; username: string; password: string }>;
  sshKey?: string;
}

/** One SSH connection: the host key it proves itself with, and what its sessions get (as an exec stream's). */
export interface AgentSshRequest {
  hostKey: string;
  env: Record<string, string>;
  git?: ExecGitIdentity;
}

export function sshRequestTarget(request: AgentSshRequest): { path: string; headers: Record<string, string> } {
  const headers: Record<string, string> = {
    [SSH_HOST_KEY_HEADER]: Buffer.from(request.hostKey).toString('base64url'),
    [EXEC_ENV_HEADER]: Buffer.from(JSON.stringify(request.env)).toString('base64url'),
  };
  if (request.git) headers[EXEC_GIT_HEADER] = Buffer.from(JSON.stringify(request.git)).toString('base64url');
  return { path: AGENT_SSH_PATH, headers };
}

export function readSshRequest(hostKeyHeader: string | undefined, envHeader: string | undefined, gitHeader: string | undefined): AgentSshRequest | string {
  if (!hostKeyHeader) return `the ${SSH_HOST_KEY_HEADER} header is missing`;
  const env = envHeader ? parseEnv(envHeader) : {};
  if (!env) return `the ${EXEC_ENV_HEADER} header is not base64url JSON of string values`;
  const git = gitHeader ? parseGitIdentity(gitHeader) : undefined;
  if (gitHeader && !git) return `the ${EXEC_GIT_HEADER} header is not base64url JSON of a git identity`;
  return { hostKey: Buffer.from(hostKeyHeader, 'base64url').toString('utf8'), env, ...(git ? { git } : {}) };
}

export interface AgentForwardRequest {
  /** What the agent dials from inside the pod: `127.0.0.1`, or a name of the workspace's network. */
  host: string;
  port: number;
}

export function execRequestTarget(request: AgentExecRequest): { path: string; headers: Record<string, string> } {
  const query = new URLSearchParams();
  for (const word of request.command) query.append('command', word);
  if (request.tty) query.set('tty', '1');
  if (request.stdin) query.set('stdin', '1');
  if (request.size) {
    query.set('cols', String(request.size.cols));
    query.set('rows', String(request.size.rows));
  }
  const env = Buffer.from(JSON.stringify(request.env)).toString('base64url');
  const git: Record<string, string> = request.git ? { [EXEC_GIT_HEADER]: Buffer.from(JSON.stringify(request.git)).toString('base64url') } : {};
  return { path: `${AGENT_EXEC_PATH}?${query}`, headers: { [EXEC_ENV_HEADER]: env, ...git } };
}

/** The request an upgrade carries, or why it is not one. */
export function readExecRequest(url: URL, envHeader: string | undefined, gitHeader?: string): AgentExecRequest | string {
  const env = envHeader ? parseEnv(envHeader) : {};
  if (!env) return `the ${EXEC_ENV_HEADER} header is not base64url JSON of string values`;
  const git = gitHeader ? parseGitIdentity(gitHeader) : undefined;
  if (gitHeader && !git) return `the ${EXEC_GIT_HEADER} header is not base64url JSON of a git identity`;
  const cols = Number(url.searchParams.get('cols'));
  const rows = Number(url.searchParams.get('rows'));
  const size = isDimension(cols) && isDimension(rows) ? { cols, rows } : undefined;
  return {
    command: url.searchParams.getAll('command'),
    tty: url.searchParams.get('tty') === '1',
    stdin: url.searchParams.get('stdin') === '1',
    size,
    env,
    ...(git ? { git } : {}),
  };
}

function parseGitIdentity(header: string): ExecGitIdentity | undefined {
  try {
    const value = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Partial<ExecGitIdentity>;
    const text = (v: unknown) => typeof v === 'string';
    const credentialsOk = Array.isArray(value.credentials) && value.credentials.every((c) => text(c?.host) && text(c?.username) && text(c?.password));
    if (!text(value.name) || !text(value.email) || !credentialsOk || (value.sshKey !== undefined && !text(value.sshKey))) return undefined;
    return value as ExecGitIdentity;
  } catch {
    return undefined;
  }
}

export function forwardRequestTarget(request: AgentForwardRequest): string {
  return `${AGENT_PORT_FORWARD_PATH}?${new URLSearchParams({ host: request.host, port: String(request.port) })}`;
}

export function readForwardRequest(url: URL): AgentForwardRequest | string {
  const host = url.searchParams.get('host') ?? '127.0.0.1';
  const port = Number(url.searchParams.get('port'));
  if (!Number.isInteger(port) || port < 1 || port > 65535) return 'port must be a whole number from 1 to 65535';
  if (!/^[A-Za-z0-9][-A-Za-z0-9.:]{0,252}$/.test(host)) return 'host is not a name or an address';
  return { host, port };
}

function parseEnv(header: string): Record<string, string> | undefined {
  try {
    const value = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    return Object.values(value).every((v) => typeof v === 'string') ? (value as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}
