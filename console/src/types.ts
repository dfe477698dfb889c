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
  /** Only on GET /workspaces/{ws}: the volume as measured now. */
  disk_usage?: { bytes: number; limit_bytes: number; percent: number };
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
  managed_service_id?: string;
}

/** A plan of GET /plans (kind workspace: its editor pod's limits and default storage). */
export interface WorkspacePlan {
  id: string;
  kind: 'workspace';
  title: string;
  default: boolean;
  cpu_millis: number;
  memory_mib: number;
  storage_gib: number;
}
