// What every route can rely on: its declared access rule, the caller, and the server's dependencies.
import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { CredentialResolver, Principal } from '../auth/credentials.ts';
import type { StreamGuard } from '../auth/stream-guard.ts';
import type { Clock } from '../core/clock.ts';
import type { ServerConfig } from '../core/config.ts';
import type { SecretBox } from '../core/secret-box.ts';
import type { EventFanout } from '../events/fanout.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import type { ImageSource } from '../runtime/image.ts';
import type { ServiceRunner } from '../workspaces/service-runner.ts';
import type { PodGates } from '../workspaces/pod-gate.ts';
import type { LandscapeChecker } from '../workspaces/landscape-checker.ts';
import type { StageRunner } from '../workspaces/stages.ts';
import type { Router } from '../router/router.ts';
import type { Domains } from '../domains/index.ts';
import type { WorkspaceFiles } from '../runtime/workspace-files.ts';
import type { CursorCodec } from './conventions/pagination.ts';
import type { OidcDeps } from '../people/oidc-sign-in.ts';
import type { ServerMetrics } from '../metrics/server-metrics.ts';

/**
 * Who may call a route: `public` needs no credentials; `user` a key or session; `session` the browser session
 * only (403 with a key); `admin` a caller holding platform.admin.
 */
/** `admin-session`: a cluster administrator with the browser session (an API key gets 403), as spec 4.7 asks. */
/** `optional`: anyone, and the caller is known when credentials are sent (invalid ones are refused as on `user`). */
export type AccessRule = 'public' | 'optional' | 'user' | 'session' | 'admin' | 'admin-session';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessRule;
    /** Audit action name (`api_key.create`); required on every state-changing route. */
    audit?: string;
  }
  interface FastifyRequest {
    principal?: Principal;
    /** Set by a handler when the change concerns a team, for the audit log. */
    auditTeamId?: number;
    /** Set by a handler when the change targets another path than the request's (a created resource). */
    auditTarget?: string;
  }
}

/** A request whose path parameters its route's schema typed, as lookups shared by several routes take it. */
export type RequestWithParams<P> = Pick<FastifyRequest, 'principal' | 'auditTeamId'> & { params: P };

export interface ApiDeps {
  pool: pg.Pool;
  clock: Clock;
  config: ServerConfig;
  credentials: CredentialResolver;
  cursors: CursorCodec;
  driver: RuntimeDriver;
  /** The deployed landscapes' replicas, and stage runs (src/workspaces). */
  services: ServiceRunner;
  stages: StageRunner;
  /** One change of a workspace's pods at a time: sleep and stop pass through them (src/workspaces/pod-gate.ts). */
  gates: PodGates;
  /** Serves workspace hosts on the same listener; mints their sign-in links. */
  router: Router;
  /** Custom domains: verification settings and the checker (src/domains). */
  domains: Domains;
  /** With --data-plane nginx: the secret nginx's admission requests carry (router.admitDirect). */
  nginxAdmitSecret?: string;
  /** Reads the landscape file of a workspace's code. */
  files: WorkspaceFiles;
  /** Checks landscape files in worker threads, off the event loop. */
  landscapeChecker: LandscapeChecker;
  /** Makes container services' images ready at Sync; absent while the installation has none (Sync then answers 501). */
  images?: ImageSource;
  /** Seals and opens vault secrets with the installation's key. */
  secrets: SecretBox;
  log: (message: string) => void;
  /** Open streams, closed when their caller loses the right (src/auth/stream-guard.ts). */
  streams: StreamGuard;
  /** Single sign-on: the OpenID Connect providers (none when the operator set none). */
  oidc: OidcDeps;
  /** The server's Prometheus metrics (GET /metrics, src/metrics); none while only the OpenAPI document is built. */
  metrics?: ServerMetrics;
  /** The live event stream's fan-out; GET /events answers 501 without it. */
  events?: EventFanout;
}

export const API_PREFIX = '/api/v1';
