import path from 'node:path';
import type { KubernetesSettings } from '../runtime/kubernetes/settings.ts';
import { kubernetesServerSettings, readRuntimeSettings } from './kubernetes-config.ts';
import { builtInPlans, type InstallationPlans } from '../capacity/plans.ts';
import { isIpv4, parseCidrList } from '../runtime/local/egress.ts';

/** Server settings. Every setting is a flag and an environment variable alike (flag wins). */
export interface ServerConfig {
  listenHost: string;
  listenPort: number;
  /** Address of the console host, without trailing slash; the API lives at `${baseUrl}/api/v1`. */
  baseUrl: string;
  /** True when the base URL was derived from the listen address (it then follows the real port). */
  baseUrlDerived: boolean;
  dataDir: string;
  databaseUrl?: string;
  adminEmail: string;
  logLevel: string;
  /** Requests per minute and caller (user, or address without credentials); 0 turns the limiter off. */
  rateLimitPerMinute: number;
  /** Minutes a sign-in link stays valid. */
  signInLinkMinutes: number;
  /** Workspace hosts live under it: `w<id>.<domain>`, `ide-w<id>.<domain>`. */
  workspaceDomain: string;
  /**
   * Whether workspaces may be cloned from local paths and file:// URLs (tests, single-machine set-ups); `own`: only
   * paths owned by the user who started the server (`npm run up`'s default; docs/decisions.md).
   */
  allowLocalRepositories: boolean | 'own';
  /** The first start also creates the first administrator's organization and team (docs/decisions.md). */
  firstTeam: boolean;
  /** Base64 of the 32-byte key sealing vault secrets; without it one is kept in `<data dir>/secrets.key`. */
  secretsKey?: string;
  /** Private address ranges (CIDRs) that `forward` targets may use anyway; none by default (SSRF guard). */
  forwardAllow: string[];
  /** `--pod-dns`: IPv4 resolvers of the local driver's pods (as root); the host's when absent (docs/runtime.md). */
  podDns?: string[];
  /** `--egress-allow`: IPv4 CIDRs pods reach although private, link-local or the host's own. */
  egressAllow: string[];
  /** `--pod-address-range`, `--service-address-range`: private IPv4 CIDRs; absent: a free /16 picked at start. */
  podAddressRange?: string;
  serviceAddressRange?: string;
  /** `--egress-deny`: IPv4 CIDRs pods never reach. */
  egressDeny: string[];
  /** Seconds the router waits for an upstream's answer before 504. */
  upstreamTimeoutSeconds: number;
  /** Seconds a non-browser request is held while its workspace or service wakes, before 503 with the reason. */
  wakeHoldSeconds: number;
  /** Who carries workspace traffic: svc's own router (`node`), or nginx in front of svc (`nginx`, docs/router.md). */
  dataPlane: 'node' | 'nginx';
  /** A file where nginx logs every request with the route it chose (debugging the nginx data plane); none by default. */
  nginxAccessLog?: string;
  /** Tools directory of scripts/setup-editor.sh; workspaces get code-server when it is installed there. */
  toolsDir: string;
  /** How the local runtime makes volumes: `loop` (a file system of the volume's size), `directory` (measured only), `auto`. */
  volumeBackend: 'auto' | 'loop' | 'directory';
  /** Milliseconds checking one svc.yml may take (in a worker thread) before it is refused as too complex. */
  landscapeCheckBudgetMs: number;
  /** Managed-service provider versions turned off (`provider:version`): new instances cannot use them. */
  managedDisabled: string[];
  /** Registries (`host:port` or `host`) pulled from over plain HTTP; all others over HTTPS (docs/images.md). */
  insecureRegistries: string[];
  /** Bytes the image store (`<data dir>/images`) may hold. */
  imagesMaxBytes: number;
  /** Seconds a request to a registry may go with (next to) nothing arriving before it fails as `stalled`. */
  registryStallSeconds: number;
  /** Seconds one image pull may take in all before it fails as `timed-out`. */
  registryPullTimeoutSeconds: number;
  /** The mail server (smtp:// or smtps://, src/mail/smtp-url.ts); without it no mail is sent and links are shown instead. */
  smtpUrl?: string;
  /** The From address of svc's mail. */
  mailFrom: string;
  /** Seconds before the first retry of mail the mail server did not take; doubled after each attempt. */
  mailRetrySeconds: number;
  /** Days an invitation link stays valid. */
  invitationDays: number;
  /** OpenID Connect providers as JSON or YAML text (--oidc-providers), read by src/auth/oidc/provider-settings.ts. */
  oidcProviders?: string;
  /** A file holding that text (--oidc-providers-file); read at start. */
  oidcProvidersFile?: string;
  /** `--dns-resolver`: the DNS server checking custom domains' TXT records; the system's when absent. */
  dnsResolver?: string;
  /** How long a verified custom domain's TXT record may be missing before it lapses; how long an unverified one is kept. */
  domainLapseSeconds: number;
  domainUnverifiedSeconds: number;
  /** `--tls-listen`: where the data plane terminates TLS (custom domains, wildcard hosts); none without it. */
  tlsListen?: { host: string; port: number };
  /** `--metrics-listen`: where GET /metrics answers without credentials (a Prometheus scraper); none without it. */
  metricsListen?: { host: string; port: number };
  /** `--tls-wildcard-cert`, `--tls-wildcard-key`: the installation's wildcard certificate (src/domains/wildcard.ts). */
  tlsWildcardCert?: string;
  tlsWildcardKey?: string;
  /** The ACME CA issuing custom domains' certificates, the account's e-mail, CAs trusting its HTTPS. */
  acmeDirectory?: string;
  acmeEmail?: string;
  acmeCaFile?: string;
  /** Seconds a server's claim on an operation holds without renewal: another server takes over this long after its death. */
  operationLeaseSeconds: number;
  /** Seconds between runs of the periodic chores (idle sleep, purge, ...), run by one server of the installation each time. */
  choreIntervalSeconds: number;
  /** The operator's plans file (src/capacity/plans-file.ts); the built-in plans without one. */
  plansFile?: string;
  /** The installation's plans: the built-in ones until startServer has read `plansFile`. */
  plans: InstallationPlans;
  /**
   * `security.defaultUid` (spec 4.7): the first UID of the workspaces' range; workspace n of the range runs as
   * defaultUid + n. After it changes, `POST /teams/{team}/volume-owner` moves a team's volumes (docs/capacity.md).
   */
  defaultUid: number;
  /** Where workspaces run: pods on this machine (`local`) or on a Kubernetes cluster (`kubernetes`, docs/kubernetes.md). */
  runtime: 'local' | 'kubernetes';
  /** The Kubernetes driver's settings, with `--runtime kubernetes`. */
  kubernetes?: KubernetesSettings;
}

interface Setting {
  flag: string;
  env: string;
  describe: string;
}

export const serverSettings: Record<string, Setting> = {
  listen: { flag: '--listen', env: 'SVC_LISTEN', describe: 'HOST:PORT to listen on; port 0 picks a free port (default 127.0.0.1:8080)' },
  dataDir: { flag: '--data-dir', env: 'SVC_DATA_DIR', describe: 'data directory (default ./.svc)' },
  baseUrl: { flag: '--base-url', env: 'SVC_BASE_URL', describe: 'public address of the console (default http://HOST:PORT)' },
  databaseUrl: { flag: '--database-url', env: 'DATABASE_URL', describe: 'PostgreSQL server to use; without it an embedded PostgreSQL runs in the data directory' },
  adminEmail: { flag: '--admin-email', env: 'SVC_ADMIN_EMAIL', describe: 'e-mail of the first administrator (default admin@localhost)' },
  logLevel: { flag: '--log-level', env: 'SVC_LOG_LEVEL', describe: 'pino log level (default info)' },
  rateLimit: { flag: '--rate-limit', env: 'SVC_RATE_LIMIT', describe: 'requests per minute per caller; 0 turns it off (default 3000)' },
  signInLinkMinutes: { flag: '--sign-in-link-minutes', env: 'SVC_SIGN_IN_LINK_MINUTES', describe: 'minutes a sign-in link stays valid (default 15)' },
  workspaceDomain: { flag: '--workspace-domain', env: 'SVC_WORKSPACE_DOMAIN', describe: 'domain of workspace addresses (default localhost)' },
  secretsKey: { flag: '--secrets-key', env: 'SVC_SECRETS_KEY', describe: 'base64 of 32 random bytes sealing vault secrets (default: <data dir>/secrets.key)' },
  upstreamTimeout: { flag: '--upstream-timeout', env: 'SVC_UPSTREAM_TIMEOUT', describe: 'seconds the router waits for a service to answer before 504 (default 60)' },
  wakeHold: { flag: '--wake-hold', env: 'SVC_WAKE_HOLD', describe: 'seconds a request of a non-browser client waits for its workspace to wake before 503 with Retry-After; 0 answers at once (default 60)' },
  forwardAllow: { flag: '--forward-allow', env: 'SVC_FORWARD_ALLOW', describe: 'comma-separated CIDRs forward targets may reach although private (default none)' },
  podDns: { flag: '--pod-dns', env: 'SVC_POD_DNS', describe: "comma-separated IPv4 addresses of the DNS resolvers pods use (local runtime as root; default: the host's, or systemd-resolved's upstream servers when the host's resolver is on loopback)" },
  podAddressRange: { flag: '--pod-address-range', env: 'SVC_POD_ADDRESS_RANGE', describe: "private IPv4 CIDR the editor pods' addresses come from (local runtime as root; default: a free /16 of 10.128.0.0/9 picked at start, 10.213.0.0/16 when free)" },
  serviceAddressRange: { flag: '--service-address-range', env: 'SVC_SERVICE_ADDRESS_RANGE', describe: "private IPv4 CIDR the workspaces' service networks come from (local runtime as root; default: a free /16 picked at start, 10.214.0.0/16 when free)" },
  egressAllow: { flag: '--egress-allow', env: 'SVC_EGRESS_ALLOW', describe: "comma-separated IPv4 CIDRs pods may reach although private, link-local or the host's own addresses (default none; other pods are never reached)" },
  egressDeny: { flag: '--egress-deny', env: 'SVC_EGRESS_DENY', describe: 'comma-separated IPv4 CIDRs pods may never reach, on top of the private and link-local ranges (default none)' },
  dataPlane: { flag: '--data-plane', env: 'SVC_DATA_PLANE', describe: 'nginx (default): Debian\'s nginx is the listener and serves workspace traffic itself; node: svc alone' },
  nginxAccessLog: { flag: '--nginx-access-log', env: 'SVC_NGINX_ACCESS_LOG', describe: 'file where the nginx data plane logs every request with the route it took (default: no log)' },
  volumeBackend: { flag: '--volume-backend', env: 'SVC_VOLUME_BACKEND', describe: "how the local runtime makes workspace volumes: loop (an ext4 image of the volume's size, loop-mounted: writes past storage_gib fail), directory (a plain directory whose size is only measured), auto (default: loop where the server is root and the machine has loop devices and e2fsprogs, else directory)" },
  toolsDir: { flag: '--tools-dir', env: 'SVC_TOOLS_DIR', describe: 'where scripts/setup-editor.sh installs code-server, the workspace editor (default /var/cache/svc/tools)' },
  landscapeCheckBudget: { flag: '--landscape-check-budget', env: 'SVC_LANDSCAPE_CHECK_BUDGET', describe: 'milliseconds checking one svc.yml may take before it is refused as too complex (default 5000)' },
  managedDisable: { flag: '--managed-disable', env: 'SVC_MANAGED_DISABLE', describe: 'comma-separated provider:version entries of the managed-service catalog to turn off, e.g. postgres:15 (default none)' },
  insecureRegistries: { flag: '--insecure-registries', env: 'SVC_INSECURE_REGISTRIES', describe: 'comma-separated host:port of image registries reached over plain HTTP instead of HTTPS (default none)' },
  imagesMaxSize: { flag: '--images-max-size', env: 'SVC_IMAGES_MAX_SIZE', describe: 'most the image store in the data directory may hold: MiB, or a size with MiB, GiB or TiB (default 20GiB)' },
  registryStallTimeout: { flag: '--registry-stall-timeout', env: 'SVC_REGISTRY_STALL_TIMEOUT', describe: 'seconds a request to an image registry may go with less than 1 KiB arriving before the pull fails as stalled (default 60)' },
  registryPullTimeout: { flag: '--registry-pull-timeout', env: 'SVC_REGISTRY_PULL_TIMEOUT', describe: 'seconds one image pull may take in all, however its bytes come, before it fails as timed-out (default 1800)' },
  smtpUrl: { flag: '--smtp-url', env: 'SVC_SMTP_URL', describe: 'mail server for invitations and sign-in links: smtp://user:password@host:587 (STARTTLS when offered; ?starttls=required) or smtps://host:465 (default: none, links are shown instead)' },
  mailFrom: { flag: '--mail-from', env: 'SVC_MAIL_FROM', describe: 'From address of mail (default svc <svc@HOST of the base URL>)' },
  mailRetrySeconds: { flag: '--mail-retry-seconds', env: 'SVC_MAIL_RETRY_SECONDS', describe: 'seconds before mail the mail server did not take is tried again; doubles each time (default 30)' },
  invitationDays: { flag: '--invitation-days', env: 'SVC_INVITATION_DAYS', describe: 'days an invitation link stays valid (default 7)' },
  oidcProviders: { flag: '--oidc-providers', env: 'SVC_OIDC_PROVIDERS', describe: 'single sign-on: a JSON list of OpenID Connect providers {id, name, issuer, clientId, clientSecret or clientSecretEnv, scopes, allowedDomains, groupsClaim, roleRules} (default none; docs/operators.md)' },
  oidcProvidersFile: { flag: '--oidc-providers-file', env: 'SVC_OIDC_PROVIDERS_FILE', describe: 'single sign-on: a YAML or JSON file with that list (default none)' },
  dnsResolver: { flag: '--dns-resolver', env: 'SVC_DNS_RESOLVER', describe: "DNS server (host:port) that checks custom domains' TXT records (default: the system's resolvers)" },
  domainLapseSeconds: { flag: '--domain-lapse-seconds', env: 'SVC_DOMAIN_LAPSE_SECONDS', describe: "seconds a verified custom domain's TXT record may be missing before it lapses (default 604800, 7 days)" },
  domainUnverifiedSeconds: { flag: '--domain-unverified-seconds', env: 'SVC_DOMAIN_UNVERIFIED_SECONDS', describe: 'seconds a custom domain that was never verified keeps its name before it is removed (default 604800, 7 days)' },
  tlsListen: { flag: '--tls-listen', env: 'SVC_TLS_LISTEN', describe: 'HOST:PORT where the data plane (nginx or node) terminates TLS for custom domains with a certificate and the names of the wildcard certificate; port 0 picks a free port (default: no TLS)' },
  metricsListen: { flag: '--metrics-listen', env: 'SVC_METRICS_LISTEN', describe: 'HOST:PORT where GET /metrics answers in the Prometheus text format without credentials, for a scraper; port 0 picks a free port (default: none; on the API listener platform administrators read /metrics)' },
  tlsWildcardCert: { flag: '--tls-wildcard-cert', env: 'SVC_TLS_WILDCARD_CERT', describe: "PEM file of the installation's wildcard certificate (leaf first, then its chain), e.g. for *.<workspace domain>: HTTPS for workspace hosts and custom domains it covers (needs --tls-listen and --tls-wildcard-key)" },
  tlsWildcardKey: { flag: '--tls-wildcard-key', env: 'SVC_TLS_WILDCARD_KEY', describe: 'PEM file of the private key of --tls-wildcard-cert (unencrypted)' },
  acmeDirectory: { flag: '--acme-directory', env: 'SVC_ACME_DIRECTORY', describe: "ACME directory URL of the CA that issues custom domains' certificates, e.g. https://acme-v02.api.letsencrypt.org/directory (default: none, certificates are not managed)" },
  acmeEmail: { flag: '--acme-email', env: 'SVC_ACME_EMAIL', describe: 'contact e-mail of the ACME account (default none)' },
  acmeCaFile: { flag: '--acme-ca-file', env: 'SVC_ACME_CA_FILE', describe: "PEM file of CAs trusted for the ACME server's own HTTPS, for a private or test CA (default: the system's)" },
  operationLease: { flag: '--operation-lease', env: 'SVC_OPERATION_LEASE', describe: 'seconds a server holds an operation without renewing it; another server takes over that long after its death (default 30)' },
  choreInterval: { flag: '--chore-interval', env: 'SVC_CHORE_INTERVAL', describe: 'seconds between runs of the chores (idle sleep, purge, health checks), each run by one server of the installation (default 60)' },
  plansFile: { flag: '--plans-file', env: 'SVC_PLANS_FILE', describe: 'YAML file with the workspace and service plans and their defaults (docs/capacity.md; default: the built-in plans)' },
  defaultUid: { flag: '--default-uid', env: 'SVC_DEFAULT_UID', describe: 'security.defaultUid: first UID of the range workspaces run as, each workspace its own (default 100001; after a change, POST /teams/{team}/volume-owner re-owns the volumes)' },
  runtime: { flag: '--runtime', env: 'SVC_RUNTIME', describe: 'local (default): pods on this machine; kubernetes: pods on the cluster of KUBECONFIG or, in a pod, of its service account (docs/kubernetes.md)' },
  ...kubernetesServerSettings,
  allowLocalRepositories: { flag: '--allow-local-repositories', env: 'SVC_ALLOW_LOCAL_REPOSITORIES', describe: "true to allow cloning local paths and file:// URLs; own: only those owned by the user who started the server (npm run up's default); default false" },
  firstTeam: { flag: '--first-team', env: 'SVC_FIRST_TEAM', describe: 'true (default): the first start creates the administrator\'s organization "My organization" and team "My team"; false: none' },
};

export class ConfigError extends Error {}

/** Reads `--flag value` / `--flag=value` pairs; unknown flags are errors. */
export function parseFlags(argv: string[], known: string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!known.includes(name)) throw new ConfigError(`unknown option ${name}`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new ConfigError(`option ${name} needs a value`);
    values.set(name, value);
  }
  return values;
}

/** The first UID of the workspaces' range unless `security.defaultUid` says otherwise (the sequence of migration 004 starts there). */
export const FIRST_WORKSPACE_UID = 100001;

/** Workspace UIDs stay clear of system users and leave room above for the range (a UID is at most 2^31 - 1). */
export const DEFAULT_UID_BOUNDS = { min: 1000, max: 2_000_000_000 } as const;

function uidSetting(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < DEFAULT_UID_BOUNDS.min || value > DEFAULT_UID_BOUNDS.max) {
    throw new ConfigError(`default UID (security.defaultUid) must be a whole number from ${DEFAULT_UID_BOUNDS.min} to ${DEFAULT_UID_BOUNDS.max}, got "${text}"`);
  }
  return value;
}

export function parseListen(text: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new ConfigError(`listen address must be HOST:PORT, got "${text}"`);
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

function positiveInteger(text: string, name: string, allowZero: boolean): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) throw new ConfigError(`${name} must be a whole number, got "${text}"`);
  return value;
}

export function loadServerConfig(argv: string[], env: NodeJS.ProcessEnv, cwd = process.cwd()): ServerConfig {
  const flags = parseFlags(argv, Object.values(serverSettings).map((s) => s.flag));
  const read = (key: keyof typeof serverSettings): string | undefined =>
    flags.get(serverSettings[key].flag) ?? (env[serverSettings[key].env] || undefined);

  const listen = parseListen(read('listen') ?? '127.0.0.1:8080');
  const explicitBase = read('baseUrl');
  if (explicitBase !== undefined && !/^https?:\/\/[^/]+(\/.*)?$/.test(explicitBase)) {
    throw new ConfigError(`base URL must be an http(s) address, got "${explicitBase}"`);
  }
  if ((read('tlsWildcardCert') === undefined) !== (read('tlsWildcardKey') === undefined)) throw new ConfigError('--tls-wildcard-cert and --tls-wildcard-key go together');
  if (read('tlsWildcardCert') !== undefined && read('tlsListen') === undefined) throw new ConfigError('--tls-wildcard-cert needs --tls-listen: where HTTPS is served');
  return {
    listenHost: listen.host,
    listenPort: listen.port,
    baseUrl: (explicitBase ?? urlFor(listen.host, listen.port)).replace(/\/+$/, ''),
    baseUrlDerived: explicitBase === undefined,
    dataDir: path.resolve(cwd, read('dataDir') ?? '.svc'),
    databaseUrl: read('databaseUrl'),
    adminEmail: read('adminEmail') ?? 'admin@localhost',
    logLevel: read('logLevel') ?? 'info',
    rateLimitPerMinute: positiveInteger(read('rateLimit') ?? '3000', 'rate limit', true),
    signInLinkMinutes: positiveInteger(read('signInLinkMinutes') ?? '15', 'sign-in link minutes', false),
    workspaceDomain: domainName(read('workspaceDomain') ?? 'localhost'),
    allowLocalRepositories: read('allowLocalRepositories') === 'own' ? 'own' : yesOrNo(read('allowLocalRepositories') ?? 'false', 'allow local repositories (true, false or own)'),
    firstTeam: yesOrNo(read('firstTeam') ?? 'true', 'first team'),
    secretsKey: read('secretsKey'),
    upstreamTimeoutSeconds: positiveInteger(read('upstreamTimeout') ?? '60', 'upstream timeout', false),
    wakeHoldSeconds: positiveInteger(read('wakeHold') ?? '60', 'wake hold', true),
    forwardAllow: (read('forwardAllow') ?? '').split(',').map((c) => c.trim()).filter(Boolean),
    podDns: read('podDns') === undefined ? undefined : ipv4List(read('podDns')!, 'pod DNS'),
    podAddressRange: read('podAddressRange') || undefined,
    serviceAddressRange: read('serviceAddressRange') || undefined,
    egressAllow: cidrList(read('egressAllow') ?? '', 'egress allow'),
    egressDeny: cidrList(read('egressDeny') ?? '', 'egress deny'),
    toolsDir: path.resolve(cwd, read('toolsDir') ?? '/var/cache/svc/tools'),
    volumeBackend: volumeBackend(read('volumeBackend') ?? 'auto'),
    dataPlane: dataPlane(read('dataPlane') ?? 'nginx'),
    nginxAccessLog: read('nginxAccessLog') && path.resolve(cwd, read('nginxAccessLog')!),
    landscapeCheckBudgetMs: positiveInteger(read('landscapeCheckBudget') ?? '5000', 'landscape check budget', false),
    managedDisabled: (read('managedDisable') ?? '').split(',').map((v) => v.trim()).filter(Boolean),
    insecureRegistries: registryHosts(read('insecureRegistries') ?? ''),
    imagesMaxBytes: sizeInBytes(read('imagesMaxSize') ?? '20GiB', 'images max size'),
    registryStallSeconds: positiveInteger(read('registryStallTimeout') ?? '60', 'registry stall timeout', false),
    registryPullTimeoutSeconds: positiveInteger(read('registryPullTimeout') ?? '1800', 'registry pull timeout', false),
    smtpUrl: smtpUrl(read('smtpUrl')),
    mailFrom: read('mailFrom') ?? `svc <svc@${mailDomain(explicitBase ?? 'http://localhost')}>`,
    mailRetrySeconds: positiveInteger(read('mailRetrySeconds') ?? '30', 'mail retry seconds', false),
    invitationDays: positiveInteger(read('invitationDays') ?? '7', 'invitation days', false),
    oidcProviders: read('oidcProviders'),
    oidcProvidersFile: read('oidcProvidersFile') && path.resolve(cwd, read('oidcProvidersFile')!),
    dnsResolver: dnsResolver(read('dnsResolver')),
    tlsListen: read('tlsListen') === undefined ? undefined : parseListen(read('tlsListen')!),
    metricsListen: read('metricsListen') === undefined ? undefined : parseListen(read('metricsListen')!),
    tlsWildcardCert: read('tlsWildcardCert') && path.resolve(cwd, read('tlsWildcardCert')!),
    tlsWildcardKey: read('tlsWildcardKey') && path.resolve(cwd, read('tlsWildcardKey')!),
    acmeDirectory: httpsUrl(read('acmeDirectory'), 'ACME directory'),
    acmeEmail: read('acmeEmail'),
    acmeCaFile: read('acmeCaFile') && path.resolve(cwd, read('acmeCaFile')!),
    domainLapseSeconds: positiveInteger(read('domainLapseSeconds') ?? '604800', 'domain lapse seconds', false),
    domainUnverifiedSeconds: positiveInteger(read('domainUnverifiedSeconds') ?? '604800', 'domain unverified seconds', false),
    operationLeaseSeconds: positiveInteger(read('operationLease') ?? '30', 'operation lease', false),
    choreIntervalSeconds: positiveInteger(read('choreInterval') ?? '60', 'chore interval', false),
    plansFile: read('plansFile') && path.resolve(cwd, read('plansFile')!),
    plans: builtInPlans,
    defaultUid: uidSetting(read('defaultUid') ?? String(FIRST_WORKSPACE_UID)),
    ...runtimeSettings(read),
  };
}

/** `--runtime` and, for `kubernetes`, the driver's settings (src/core/kubernetes-config.ts). */
function runtimeSettings(read: (key: keyof typeof serverSettings) => string | undefined): Pick<ServerConfig, 'runtime' | 'kubernetes'> {
  return readRuntimeSettings(read, (message) => {
    throw new ConfigError(message);
  });
}

/** Only the scheme here; src/mail/smtp-url.ts reads the rest (`svc server` checks it before starting). */
function smtpUrl(text: string | undefined): string | undefined {
  if (text !== undefined && !/^smtps?:\/\//i.test(text)) throw new ConfigError('SMTP URL must start with smtp:// or smtps://');
  return text;
}

/** The base URL's host as a mail domain; `localhost` for addresses (no mail domain there). */
function mailDomain(baseUrl: string): string {
  const host = new URL(baseUrl).hostname;
  return /^[\d.]+$|^\[/.test(host) ? 'localhost' : host;
}

function domainName(text: string): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i.test(text)) throw new ConfigError(`workspace domain must be a domain name, got "${text}"`);
  return text.toLowerCase();
}

function httpsUrl(text: string | undefined, name: string): string | undefined {
  if (text !== undefined && !/^https:\/\/[^/]+/.test(text)) throw new ConfigError(`${name} must be an https:// URL, got "${text}"`);
  return text;
}

/** `host:port` or `host` of a DNS server (an IP address: node's resolver takes no names). */
function dnsResolver(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:]+\])(:\d{1,5})?$/i.test(text)) throw new ConfigError(`DNS resolver must be an IP address with an optional port (127.0.0.1:53, [::1]:53), got "${text}"`);
  return text;
}

function cidrList(text: string, name: string): string[] {
  try {
    return parseCidrList(text);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
}

function ipv4List(text: string, name: string): string[] {
  const addresses = text.split(',').map((a) => a.trim()).filter(Boolean);
  const wrong = addresses.find((address) => !isIpv4(address));
  if (wrong !== undefined || addresses.length === 0) throw new ConfigError(`${name} must be IPv4 addresses separated by commas, got "${text}"`);
  return addresses;
}

function registryHosts(text: string): string[] {
  const hosts = text.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  for (const host of hosts) {
    if (!/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:\d{1,5})?$|^\[[0-9a-f:]+\](:\d{1,5})?$/.test(host)) {
      throw new ConfigError(`insecure registries must be host or host:port entries separated by commas, got "${host}"`);
    }
  }
  return hosts;
}

/** MiB as a number, or a number with MiB, GiB or TiB (`20GiB`, `512 MiB`). */
function sizeInBytes(text: string, name: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(MiB|GiB|TiB)?\s*$/i.exec(text);
  const factor = { mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 }[(match?.[2] ?? 'MiB').toLowerCase() as 'mib'];
  const bytes = match ? Math.floor(Number(match[1]) * factor) : NaN;
  if (!(bytes > 0)) throw new ConfigError(`${name} must be a size such as 20GiB or 512MiB, got "${text}"`);
  return bytes;
}

function volumeBackend(text: string): 'auto' | 'loop' | 'directory' {
  if (text === 'auto' || text === 'loop' || text === 'directory') return text;
  throw new ConfigError(`volume backend must be auto, loop or directory, got "${text}"`);
}

function dataPlane(text: string): 'node' | 'nginx' {
  if (text === 'node' || text === 'nginx') return text;
  throw new ConfigError(`data plane must be node or nginx, got "${text}"`);
}

function yesOrNo(text: string, name: string): boolean {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${text}"`);
}

export function urlFor(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

export function serverUsage(): string {
  const lines = Object.values(serverSettings).map((s) => `  ${`${s.flag} / ${s.env}`.padEnd(48)} ${s.describe}`);
  return ['Usage: svc server [options]', '', 'Options (flag or environment variable):', ...lines].join('\n');
}
