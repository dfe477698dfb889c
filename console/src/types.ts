// The API's resources as the console reads them (see GET /api/v1/openapi.yaml). Clients ignore unknown fields.

export interface Page<T> {
  items: T[];
  next_cursor?: string;
}

export interface Me {
  id: number;
  email: string;
  name: string;
  permissions: string[];
  has_password: boolean;
  created_at: string;
  authenticated_by: 'key' | 'session';
}

export interface User {
  id: number;
  email: string;
  name: string;
}

export interface ApiKey {
  id: string;
  name: string;
  source: 'console' | 'cli';
  prefix: string;
  created_at: string;
  regenerated_at?: string;
  last_used_at?: string;
  expires_at?: string;
}

export interface ApiKeyWithToken extends ApiKey {
  token: string;
}

export interface Org {
  id: string;
  name: string;
  role?: string;
  permissions: string[];
}

export interface Team {
  id: number;
  org_id: string;
  name: string;
  role?: string;
  permissions: string[];
}

export interface Member {
  user_id: number;
  email: string;
  name: string;
  role: string;
}

/** The state of the mail carrying a link (docs/people.md, "The outbox"); `not_sent` without a mail server. */
export interface MailState {
  state: 'not_sent' | 'queued' | 'sending' | 'retrying' | 'sent' | 'failed' | 'bounced' | 'cancelled';
  detail: string;
  attempts: number;
  next_attempt_at?: string;
  sent_at?: string;
}

export interface Invitation {
  id: string;
  org_id: string;
  email: string;
  role: 'owner' | 'member';
  teams: { team_id: number; role: string }[];
  state: 'pending' | 'expired' | 'accepted' | 'revoked';
  mail: MailState;
  created_by?: number;
  created_at: string;
  expires_at: string;
  accepted_at?: string;
  revoked_at?: string;
  /** The link, only in the answer that made or renewed it, and only without a mail server. */
  url?: string;
}

export interface InvitationAccepted {
  user: User;
  invitation: Invitation;
  account_created: boolean;
}

export interface OwnerTransfer {
  id: string;
  workspace_id: number;
  team_id: number;
  from_user_id?: number;
  offered_by?: number;
  to_user_id: number;
  state: 'open' | 'accepted' | 'declined' | 'cancelled';
  created_at: string;
  decided_at?: string;
  decided_by?: number;
}

export type WorkspaceState = 'creating' | 'cloning' | 'running' | 'sleeping' | 'waking_up' | 'stopped' | 'error' | 'deleting';

/** The editor the workspace pod runs (GET /workspaces/{ws} only): code-server, the built-in fallback, or a command. */
export interface EditorInfo {
  kind: 'code-server' | 'built-in' | 'command';
  version?: string;
  reason: string;
}

export interface Workspace {
  id: number;
  team_id: number;
  name: string;
  plan: string;
  git?: { provider: string; repo: string; ref?: string };
  storage_gib: number;
  restricted: boolean;
  state: WorkspaceState;
  status_detail: string;
  urls: { ide: string; dev: string };
  idle_timeout_minutes: number;
  editor?: EditorInfo;
  last_archived_at?: string;
  /** The volume is in the archive store now. */
  archived: boolean;
  restored_from?: number;
  permissions?: string[];
  /** Its owner (2.3); `needs_owner` while the owner has left the team and no transfer was accepted yet. */
  owner_id?: number;
  needs_owner?: boolean;
  created_at: string;
  updated_at: string;
  deleted_at?: string;
  purge_after?: string;
}

export interface FieldError {
  pointer: string;
  message: string;
  in?: string;
  line?: number;
  column?: number;
  code?: string;
  subject?: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldError[];
  secrets?: string[];
}

export interface Operation {
  id: string;
  kind: string;
  state: 'pending' | 'running' | 'succeeded' | 'failed';
  target?: string;
  detail?: string;
  error?: ProblemBody;
  created_at: string;
  updated_at: string;
  finished_at?: string;
}

export type ManagedServiceStatus = 'creating' | 'updating' | 'pausing' | 'unpausing' | 'deleting' | 'synchronized' | 'paused' | 'deleted' | 'unknown' | 'invalid-provider';

/** A managed-service instance (GET /managed-services/{ms}); `details` are what its provider publishes, last known. */
export interface ManagedService {
  id: string;
  team_id: number;
  workspace_id: number;
  name: string;
  provider: string;
  version: string;
  plan: string;
  status: ManagedServiceStatus;
  details: Record<string, string | number | boolean>;
  created_at: string;
  updated_at: string;
  deleted_at?: string;
}

export interface Service {
  name: string;
  type: string;
  status: string;
  detail?: string;
  availability?: string;
  running: boolean;
  replicas: { ready: number; desired: number };
  /** Where it is reached from outside the workspace (GET /workspaces/{ws}/landscape). */
  ports?: ServicePort[];
  /** A container service's image as pinned at the last Sync. */
  image?: { reference: string; digest: string };
}

export interface ServicePort {
  /** 0 for the routes of a forward service. */
  port: number;
  public: boolean;
  public_url?: string;
  routes: { path: string; strip: boolean; url: string }[];
}

export interface Landscape {
  workspace_id: number;
  profile: string | null;
  banner: { state: string; detail?: string; errors?: FieldError[] };
  synced_at?: string;
  services: Service[];
  dev_url: { url: string; state: string; detail: string };
}

export interface PlanService {
  name: string;
  action: 'create' | 'change' | 'replace' | 'remove';
  type: string;
  previousType?: string;
  changes: string[];
  /** Environment variables whose value changes at Sync (names only; a variable or secret may have changed). */
  environment?: string[];
  /** Whether Sync starts the service afresh. */
  restarts?: boolean;
  /** Why it restarts: a managed service's values, or a container image whose tag names another digest now. */
  reason?: string;
}

/** A container service's image and the digest it names now (what Sync runs); null with the problem when unresolved. */
export interface PlanImage {
  service: string;
  image: string;
  digest: string | null;
  deployed_digest?: string;
  problem?: { title?: string; detail?: string };
}

export interface Plan {
  profile: string | null;
  hash: string;
  changed: boolean;
  services: PlanService[];
  unchanged: string[];
  prepare: { changed: boolean; changes: string[] };
  test: { changed: boolean; changes: string[] };
  images?: PlanImage[];
}

export type StageName = 'prepare' | 'test' | 'run';

export interface Step {
  index: number;
  name: string;
  run: string;
  state: 'waiting' | 'running' | 'success' | 'failure' | 'aborted' | 'skipped';
  exit_code: number | null;
  started_at: string | null;
  finished_at: string | null;
}

export interface StageRun {
  id: number;
  stage: StageName;
  state: 'waiting' | 'running' | 'success' | 'failure' | 'aborted';
  detail: string | null;
  created_at: string;
  finished_at: string | null;
  steps: Step[];
}

export interface Stage {
  workspace_id: number;
  stage: StageName;
  current: StageRun | null;
  runs: StageRun[];
}

export interface LogLine {
  seq: number;
  at: string;
  stream: 'stdout' | 'stderr' | 'system';
  text: string;
}

export interface Variable {
  name: string;
  value: string;
  updated_at: string;
}

export interface Secret {
  name: string;
  updated_at: string;
}

/** A team's credentials for a container registry (the password is never returned). */
export interface RegistryCredential {
  registry: string;
  username: string;
  created_at: string;
  updated_at: string;
}

/** An event of GET /api/v1/events (spec 6): ids, and the full object for workspaces and operations. */
export interface SvcEvent {
  type: string;
  at: string;
  team_id?: number;
  workspace_id?: number;
  workspace?: Workspace;
  operation?: Operation;
  stage?: StageName;
  run_id?: number;
  org_id?: string;
  user_id?: number;
  managed_service_id?: string;
}
