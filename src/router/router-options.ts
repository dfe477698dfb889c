// What the router (router.ts) is given: the store, the driver, credentials, limits, and the hooks of the data plane.
import type pg from 'pg';
import type { StreamGuard } from '../auth/stream-guard.ts';
import type { CredentialResolver } from '../auth/credentials.ts';
import type { InstallationPlans } from '../capacity/plans.ts';
import type { Clock } from '../core/clock.ts';
import type { SecretBox } from '../core/secret-box.ts';
import type { EventFeed } from '../events/feed.ts';
import type { NotificationHub } from '../events/hub.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import type { WorkspaceRouting } from './workspace-routes.ts';

export interface RouterOptions {
  pool: pg.Pool;
  /** The installation's plans: a wake that the team's quotas cannot hold is blocked (no capacity right now). */
  plans: InstallationPlans;
  driver: RuntimeDriver;
  /** Opens the values Sync filled in (forward targets). */
  secrets: SecretBox;
  hub: NotificationHub;
  /** The server's one reader of svc_events (shared with the event fan-out). */
  feed: EventFeed;
  credentials: CredentialResolver;
  /** Relayed WebSockets close when their caller loses the right (src/auth/stream-guard.ts). */
  streams: StreamGuard;
  clock: Clock;
  log: (message: string) => void;
  /** The console's address (sign-in pages link there) and the workspace domain. */
  consoleUrl: () => string;
  workspaceDomain: string;
  /** Body limit (default 100 MiB), upstream timeout (default 60 s), how long a request is held while waking. */
  bodyLimitBytes?: number;
  upstreamTimeoutMs?: number;
  holdMs?: number;
  /** Wakes asleep on-demand services and counts requests as their activity. */
  services: {
    wake(workspaceId: number, service: string): Promise<void>;
    noteRequest(workspaceId: number, service: string): void;
    onChange(listener: (workspaceId: number) => void): void;
  };
  /** Private addresses forward targets may use anyway (CIDRs). */
  forwardAllow?: string[];
  /** nginx is in front (--data-plane nginx): it names the client in X-Real-IP and added it to X-Forwarded-For. */
  frontProxy?: boolean;
  /** Membership or a workspace's restriction changed (the nginx data plane forgets its cached admissions). */
  onAccessChange?: () => void;
  /** A custom domain changed (the nginx data plane loads the certificates again); where it terminates TLS. */
  onDomainChange?: () => void;
  tlsPort?: () => number | undefined;
  /** Each routing as it is loaded (the nginx data plane's map follows them). */
  onRouting?: (workspaceId: number, routing: WorkspaceRouting | undefined) => void;
}
