// The server: store, notifications and API wired together, the first administrator, housekeeping.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { buildApi } from './api/app.ts';
import { CursorCodec } from './api/conventions/pagination.ts';
import { CredentialResolver } from './auth/credentials.ts';
import { StreamGuard } from './auth/stream-guard.ts';
import { createSignInLink, SESSION_IDLE_MS } from './auth/sessions.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { loadPlans } from './capacity/plans-file.ts';
import { urlFor, type ServerConfig } from './core/config.ts';
import { SecretBox } from './core/secret-box.ts';
import { EventFanout, poolEventStore, type DeliveryTrace } from './events/fanout.ts';
import { EventFeed } from './events/feed.ts';
import { NotificationHub } from './events/hub.ts';
import { sweepEvents } from './events/publish.ts';
import { openDatabase, withTransaction, type Database, type Queryable } from './store/database.ts';
import { insertOrg } from './store/orgs.ts';
import { insertTeam, upsertTeamMember } from './store/teams.ts';
import { deleteExpiredIdempotencyKeys } from './store/idempotency.ts';
import { deleteExpiredSessions } from './store/sessions.ts';
import { installationSecret } from './store/settings.ts';
import { countUsers, insertUser } from './store/users.ts';
import { isUniqueViolation } from './store/database.ts';
import type { RuntimeDriver } from './runtime/driver.ts';
import type { ImageSource } from './runtime/image.ts';
import { sleepIdleWorkspaces } from './workspaces/housekeeping.ts';
import { startWorkspaceRuntime, type ManagedChores, type WorkspaceRuntime } from './workspaces/runtime.ts';
import { ChoreScheduler, type Chore } from './cluster/chores.ts';
import { ServerPresence } from './cluster/presence.ts';
import { MailWorker } from './mail/worker.ts';
import { parseSmtpUrl } from './mail/smtp-url.ts';
import { NginxDataPlane } from './router/nginx.ts';
import { Router } from './router/router.ts';
import { Domains } from './domains/index.ts';
import { defaultVerificationSettings } from './domains/verification.ts';
import { ServedCertificates } from './domains/served-certificates.ts';
import { loadWildcardCertificate, WildcardFiles, type WildcardCertificate } from './domains/wildcard.ts';
import { NodeTlsListener } from './router/node-tls.ts';
import { listenOnUnixSocket, type UnixSocketListener } from './router/events-socket.ts';
import type { ServiceRunner } from './workspaces/service-runner.ts';
import { loadOidcProviders } from './auth/oidc/index.ts';
import { ServerMetrics } from './metrics/server-metrics.ts';
import { listenForMetrics, type MetricsListener } from './metrics/metrics-listener.ts';

export interface RunningServer {
  url: string;
  config: ServerConfig;
  database: Database;
  driver: RuntimeDriver;
  /** The deployed landscapes' replicas (tests run its chores). */
  services: ServiceRunner;
  /** The managed-service chores (tests run them after moving the clock). */
  managed: ManagedChores;
  /** The idle chore: running workspaces nobody used for their idle timeout (and not kept awake) sleep; their ids (tests run it). */
  sleepIdleWorkspaces(): Promise<number[]>;
  /** The image store's garbage collection, when the server pulls images itself (tests run it). */
  collectImages?: WorkspaceRuntime['collectImages'];
  /** The first administrator's sign-in link, when this start created them. */
  firstSignInLink?: string;
  /** nginx, with --data-plane nginx. */
  dataPlane?: NginxDataPlane;
  /** The port where the data plane (nginx or node) terminates TLS, with --tls-listen. */
  tlsPort(): number | undefined;
  /** The installation's wildcard certificate files, read again every minute (tests read them at once). */
  wildcard?: WildcardFiles;
  /** Custom domains (tests run their checks after moving the clock). */
  domains: Domains;
  /** Where --metrics-listen answers (`http://host:port/metrics`, its real port), with that setting. */
  metricsUrl?: string;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  /** The runtime driver; the local driver on the data directory when absent. */
  driver?: RuntimeDriver;
  /**
   * Resolves container services' images at Plan and makes them ready at Sync: the image store under the data
   * directory when absent (local driver); false for none (a Sync with container services then answers 501).
   */
  imageSource?: ImageSource | false;
  /** pino logger options or false; the CLI logs JSON to stderr. */
  logger?: pino.LoggerOptions | false;
}

/** The file through which `svc admin` finds the running server's database. */
export const serverInfoFile = (dataDir: string) => path.join(dataDir, 'server.json');

async function createFirstAdministrator(database: Database, config: ServerConfig, clock: Clock): Promise<string | undefined> {
  if ((await countUsers(database.pool)) > 0) return undefined;
  try {
    const admin = await withTransaction(database.pool, async (db) => {
      const user = await insertUser(db, { email: config.adminEmail, name: 'Administrator', passwordHash: null, isAdmin: true, at: clock.now() });
      if (config.firstTeam) await createFirstTeam(db, user.id, clock.now());
      return user;
    });
    const link = await createSignInLink(database.pool, {
      userId: admin.id,
      createdBy: null,
      baseUrl: config.baseUrl,
      minutes: config.signInLinkMinutes,
      now: clock.now(),
    });
    return link.url;
  } catch (error) {
    if (isUniqueViolation(error)) return undefined; // another server of the installation was first
    throw error;
  }
}

/**
 * The first administrator's organization and team, so that the first sign-in leads straight to creating a workspace
 * (issue 35; docs/decisions.md). Both can be renamed on the Teams page.
 */
export const FIRST_ORG_NAME = 'My organization';
export const FIRST_TEAM_NAME = 'My team';

async function createFirstTeam(db: Queryable, adminId: number, at: Date): Promise<void> {
  const org = await insertOrg(db, { id: randomUUID(), name: FIRST_ORG_NAME, ownerId: adminId, at });
  const team = await insertTeam(db, { orgId: org.id, name: FIRST_TEAM_NAME, at });
  await upsertTeamMember(db, team.id, adminId, 'admin', at);
}

/** The key sealing vault secrets: from the configuration (base64), or kept in the data directory, made once. */
async function loadSecretsKey(configured: string | undefined, keyFile: string): Promise<Buffer> {
  if (configured !== undefined) return Buffer.from(configured, 'base64');
  await writeFile(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
  return Buffer.from((await readFile(keyFile, 'utf8')).trim(), 'base64');
}

/** Removes server.json unless another server of the data directory wrote it since (it stays theirs). */
async function removeServerInfo(dataDir: string): Promise<void> {
  const text = await readFile(serverInfoFile(dataDir), 'utf8').catch(() => undefined);
  const pid = text === undefined ? undefined : (JSON.parse(text) as { pid?: number }).pid;
  if (pid === process.pid) await rm(serverInfoFile(dataDir), { force: true });
}

/** Expired sessions, idempotency keys and old events go every ten minutes. */
function housekeeping(database: Database, clock: Clock): Chore {
  const sweep = async () => {
    const now = clock.now();
    await deleteExpiredSessions(database.pool, new Date(now.getTime() - SESSION_IDLE_MS), now);
    await deleteExpiredIdempotencyKeys(database.pool, now);
    await sweepEvents(database.pool, now);
  };
  return { name: 'housekeeping', intervalMs: 10 * 60_000, run: sweep };
}

export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger === false ? undefined : pino({ level: config.logLevel, ...options.logger }, pino.destination(2));
  const log = (message: string) => logger?.info(message);
  await mkdir(config.dataDir, { recursive: true });
  config.plans = await loadPlans(config.plansFile);
  const oidcProviders = await loadOidcProviders(config, process.env);
  const wildcard = config.tlsWildcardCert ? await loadWildcardCertificate(config.tlsWildcardCert, config.tlsWildcardKey!, clock.now()) : undefined;
  // A renewed wildcard certificate (the operator's files change) reaches the data plane and the domains' states.
  let onWildcardChange: (next: WildcardCertificate) => Promise<void> = () => Promise.resolve();
  const wildcardFiles = wildcard && new WildcardFiles(wildcard, { certificateFile: config.tlsWildcardCert!, keyFile: config.tlsWildcardKey!, now: () => clock.now(), onChange: (next) => onWildcardChange(next), log: (m) => logger?.warn(m) });
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log: (message) => logger?.debug(message),
  });
  let workspaces: WorkspaceRuntime | undefined;
  let router: Router | undefined;
  let mail: MailWorker | undefined;
  let domains: Domains | undefined;
  // Who this server is among those of the installation (several may share the database and the data directory).
  const presence = await ServerPresence.claim({ databaseUrl: database.url, dataDir: config.dataDir, log: (m) => logger?.warn(m) }).catch(async (error: Error) => {
    await database.close();
    throw error;
  });
  log(`server ${presence.serverId} (slot ${presence.slot})`);
  const liveSlots = () => presence.liveSlots(database.pool);
  // Each server on a machine runs its own nginx on its own listen port (docs/topology.md).
  const nginxPidFile = path.join(config.dataDir, presence.slot === 0 ? 'nginx.pid' : `nginx-${presence.slot}.pid`);
  const nginx = config.dataPlane === 'nginx' ? new NginxDataPlane(config.workspaceDomain, nginxPidFile, (m) => logger?.warn(m)) : undefined;
  const nginxAdmitSecret = nginx ? randomBytes(24).toString('hex') : undefined;
  // TLS on the node data plane: node's own TLS server (nginx terminates TLS itself).
  const nodeTls = !nginx && config.tlsListen ? new NodeTlsListener(wildcard, (m) => logger?.warn(m)) : undefined;
  let closeOnFailure: (() => Promise<void>) | undefined;
  /** Where nginx sends event streams (src/router/events-socket.ts). */
  let eventsSocket: UnixSocketListener | undefined;
  const hub = new NotificationHub(database.url, (m) => logger?.warn(m));
  let streams: StreamGuard | undefined;
  // One registry per server: tests run several servers in one process.
  const metrics = new ServerMetrics();
  let metricsListener: MetricsListener | undefined;
  try {
    await hub.start();
    const credentials = new CredentialResolver(database.pool, clock, hub, (m) => logger?.warn(m), { slot: presence.slot, liveSlots });
    const trace = process.env.SVC_EVENTS_TRACE === '1' ? (t: DeliveryTrace) => process.stderr.write(`events-trace ${t.received} ${t.written} ${t.writes}\n`) : undefined;
    const eventStore = poolEventStore(database.pool);
    // One reader of svc_events for the fan-out and the router.
    const feed = new EventFeed({ hub, findEvents: eventStore.findEvents, log: (m) => logger?.warn(m) });
    await feed.start();
    const events = new EventFanout({ store: eventStore, hub, feed, clock, log: (m) => logger?.warn(m), trace });
    await events.start();
    // Open streams closed when their caller loses the right (a deleted key, a lowered role, a removal).
    const guard = new StreamGuard({ onInvalidate: (listener) => credentials.onInvalidate(listener), feed, get isLive() { return hub.isLive; }, log: (m) => logger?.warn(m) });
    streams = guard;
    const cursors = new CursorCodec(await installationSecret(database.pool, 'cursor-secret'));
    const secrets = new SecretBox(await loadSecretsKey(config.secretsKey, path.join(config.dataDir, 'secrets.key')));
    workspaces = await startWorkspaceRuntime({ pool: database.pool, clock, hub, config, log: (m) => logger?.info(m), secrets, driver: options.driver, images: options.imageSource, serverId: presence.serverId, liveServerIds: () => presence.liveServerIds(database.pool), metrics });
    const tlsTarget = config.tlsListen ? (nginx ?? nodeTls) : undefined;
    const servedCertificates = tlsTarget && new ServedCertificates({ pool: database.pool, secrets, target: tlsTarget, log: (m) => logger?.warn(m) });
    router = new Router({
      pool: database.pool,
      plans: config.plans,
      driver: workspaces.driver,
      secrets,
      hub,
      feed,
      credentials,
      streams: guard,
      clock,
      log: (m) => logger?.warn(m),
      consoleUrl: () => config.baseUrl,
      workspaceDomain: config.workspaceDomain,
      services: workspaces.services,
      forwardAllow: config.forwardAllow,
      upstreamTimeoutMs: config.upstreamTimeoutSeconds * 1000,
      holdMs: config.wakeHoldSeconds * 1000,
      frontProxy: nginx !== undefined,
      onRouting: nginx ? (id, routing) => nginx.routingChanged(id, routing) : undefined,
      onAccessChange: nginx ? () => void nginx.accessChanged() : undefined,
      onDomainChange: servedCertificates && (() => servedCertificates.schedule()),
      tlsPort: () => nginx?.tlsPort ?? nodeTls?.tlsPort,
    });
    // A deleted key stops at once on workspace hosts served by nginx too: its cached admissions are dropped first.
    // Console sign-outs (`session:`) do not concern workspace hosts.
    if (nginx) credentials.onInvalidate(async (payload) => (payload.startsWith('session:') ? undefined : nginx.accessChanged()));
    await router.start();
    const domainsOfServer = new Domains({
      pool: database.pool,
      clock,
      dnsResolver: config.dnsResolver,
      settings: { ...defaultVerificationSettings, lapseMs: config.domainLapseSeconds * 1000, unverifiedKeepMs: config.domainUnverifiedSeconds * 1000 },
      secrets,
      tls: servedCertificates !== undefined,
      wildcard: wildcardFiles && (() => wildcardFiles.certificate),
      acme: config.acmeDirectory ? { directoryUrl: config.acmeDirectory, email: config.acmeEmail, caFile: config.acmeCaFile, accountKeyFile: path.join(config.dataDir, 'acme-account.pem') } : undefined,
      log: (m) => logger?.warn(m),
    });
    domains = domainsOfServer;
    onWildcardChange = async (next) => {
      await (nginx ?? nodeTls)?.wildcardChanged(next);
      await domainsOfServer.wildcardChanged();
    };
    // Mail of the outbox goes out through the configured server; without one, nothing is queued (links are shown).
    if (config.smtpUrl) {
      mail = new MailWorker({ pool: database.pool, clock, hub, serverId: presence.serverId, smtp: parseSmtpUrl(config.smtpUrl), from: config.mailFrom, firstRetryMs: config.mailRetrySeconds * 1000, log: (m) => logger?.warn(m) });
      mail.start();
    }
    const app = await buildApi(
      { pool: database.pool, clock, config, credentials, cursors, log, events, streams: guard, driver: workspaces.driver, files: workspaces.files, landscapeChecker: workspaces.landscapeChecker, images: workspaces.images, secrets, services: workspaces.services, stages: workspaces.stages, gates: workspaces.deps.gates, router, domains: domainsOfServer, nginxAdmitSecret, oidc: { pool: database.pool, clock, providers: oidcProviders }, metrics },
      logger,
    );
    // With the nginx data plane, svc listens on loopback and nginx on the configured address.
    await app.listen(nginx ? { host: '127.0.0.1', port: 0 } : { host: config.listenHost, port: config.listenPort });
    const address = app.server.address();
    let port = typeof address === 'object' && address ? address.port : config.listenPort;
    if (config.metricsListen) {
      closeOnFailure = () => app.close();
      metricsListener = await listenForMetrics(metrics, config.metricsListen, (m) => logger?.warn(m));
      log(`metrics for scrapers at ${metricsListener.url}`);
    }
    if (nginx) {
      closeOnFailure = () => app.close();
      // Without the socket (a temporary directory whose path is too long for one, say) streams take the loopback port.
      eventsSocket = await listenOnUnixSocket(app.server).catch((error: Error) => (logger?.warn(`event streams go over loopback TCP: ${error.message}`), undefined));
      port = await nginx.start({ listenHost: config.listenHost, listenPort: config.listenPort, internalPort: port, eventsSocket: eventsSocket?.path, upstreamTimeoutSeconds: config.upstreamTimeoutSeconds, admitSecret: nginxAdmitSecret!, bodyLimitBytes: router.bodyLimitBytes, accessLog: config.nginxAccessLog, tlsListen: config.tlsListen, wildcard, editorFiles: workspaces.driver.editorWebFiles });
      servedCertificates?.schedule();
    }
    if (nodeTls) {
      closeOnFailure = () => app.close();
      await nodeTls.start(config.tlsListen!.host, config.tlsListen!.port, app.server).catch((error: Error) => {
        throw new Error(`--tls-listen ${config.tlsListen!.host}:${config.tlsListen!.port}: ${error.message}`);
      });
      servedCertificates?.schedule();
    }
    if (config.baseUrlDerived) config.baseUrl = urlFor(config.listenHost, port);
    metrics.observe({ pool: database.pool, eventStreamClients: () => events.size, dataPlaneReloads: nginx && (() => nginx.reloadCounts), imageStore: workspaces.imageStore });
    const firstSignInLink = await createFirstAdministrator(database, config, clock);
    await writeFile(
      serverInfoFile(config.dataDir),
      JSON.stringify({ pid: process.pid, url: config.baseUrl, database_url: database.url, embedded: database.embedded, mail: config.smtpUrl !== undefined }),
      { mode: 0o600 },
    );
    const chores = new ChoreScheduler(
      { pool: database.pool, clock, serverId: presence.serverId, log: (m) => logger?.warn(m), debug: (m) => logger?.debug(m) },
      [...workspaces.chores, housekeeping(database, clock)],
    );
    chores.start();
    const runtimeDeps = workspaces.deps;
    await domainsOfServer.start();
    wildcardFiles?.start();
    return {
      url: config.baseUrl,
      config,
      database,
      driver: workspaces.driver,
      services: workspaces.services,
      managed: workspaces.managed,
      sleepIdleWorkspaces: () => sleepIdleWorkspaces(runtimeDeps),
      collectImages: workspaces.collectImages,
      firstSignInLink,
      dataPlane: nginx,
      tlsPort: () => nginx?.tlsPort ?? nodeTls?.tlsPort,
      wildcard: wildcardFiles,
      domains: domainsOfServer,
      metricsUrl: metricsListener?.url,
      async close() {
        chores.close();
        await metricsListener?.close();
        await wildcardFiles?.close();
        await domainsOfServer.close();
        await nginx?.stop();
        await nodeTls?.close();
        await app.close();
        await eventsSocket?.close();
        await mail?.close();
        router?.close();
        await workspaces?.close();
        await events.stop();
        streams?.close();
        feed.stop();
        await hub.close();
        await presence.close();
        await database.close();
        await removeServerInfo(config.dataDir);
      },
    };
  } catch (error) {
    await nodeTls?.close();
    await metricsListener?.close();
    await closeOnFailure?.().catch(() => undefined);
    await eventsSocket?.close().catch(() => undefined);
    await domains?.close();
    await mail?.close();
    router?.close();
    streams?.close();
    await workspaces?.close();
    await hub.close();
    await presence.close();
    await database.close();
    throw error;
  }
}
