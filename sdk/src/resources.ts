// Names for the API's resources, each pointing into the generated types (src/generated/openapi.ts): no field is
// written here, so a change of a route's schema reaches every client through `npm run sdk`.
import type { components, paths } from './generated/openapi.ts';

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** The JSON body a route answers with `status` (200 unless given). */
export type ResponseOf<P extends keyof paths, M extends Method, S extends number = 200> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer B } } };
}
  ? B
  : never;

/** The JSON body a route takes. */
export type RequestOf<P extends keyof paths, M extends Method> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** One item of a paged list route. */
export type ItemOf<P extends keyof paths> = ResponseOf<P, 'get'> extends { items: (infer I)[] } ? I : never;

/** A page of a list (spec 4.1): `next_cursor` while there are more. */
export interface Page<T> {
  items: T[];
  next_cursor?: string;
}

export type Problem = components['schemas']['Problem'];
export type FieldError = NonNullable<Problem['errors']>[number];

export type Version = ResponseOf<'/api/v1/version', 'get'>;
export type Me = ResponseOf<'/api/v1/me', 'get'>;
export type User = ResponseOf<'/api/v1/users/{user}', 'get'>;
export type ApiKey = ResponseOf<'/api/v1/me/api-keys/{key}', 'get'>;
export type ApiKeyWithToken = ResponseOf<'/api/v1/me/api-keys', 'post', 201>;
export type Org = ResponseOf<'/api/v1/orgs/{org}', 'get'>;
export type Team = ResponseOf<'/api/v1/teams/{team}', 'get'>;
export type Member = ItemOf<'/api/v1/teams/{team}/members'>;
export type OrgMember = ItemOf<'/api/v1/orgs/{org}/members'>;
export type Invitation = ResponseOf<'/api/v1/invitations/{id}', 'get'>;
/** A new invitation, with its link when no mail server sends it. */
export type NewInvitation = ResponseOf<'/api/v1/orgs/{org}/invitations', 'post', 201>;
export type OwnerTransfer = ResponseOf<'/api/v1/owner-transfers/{id}', 'get'>;
/** The state of the mail carrying an invitation's link (docs/people.md, "The outbox"). */
export type MailState = Invitation['mail'];
/** What accepting an invitation answers: who signed in and what they joined. */
export type InvitationAccepted = ResponseOf<'/api/v1/invitations/accept', 'post', 201>;
export type RegistryCredential = ItemOf<'/api/v1/teams/{team}/registry-credentials'>;
export type Domain = ResponseOf<'/api/v1/teams/{team}/domains/{domain}', 'get'>;
export type DomainRoute = Domain['routes'][number];
export type ContainerSettings = ResponseOf<'/api/v1/teams/{team}/container-settings', 'get'>;
export type AuditEntry = ItemOf<'/api/v1/audit-log'>;

export type Operation = ResponseOf<'/api/v1/operations/{id}', 'get'>;
export type OperationState = Operation['state'];
/** Where an operation's time went (a create, start, wake or Sync of a workspace), phase by phase. */
export type OperationTimeline = ResponseOf<'/api/v1/operations/{id}/timeline', 'get'>;
export type TimelinePhase = OperationTimeline['phases'][number];

export type Workspace = ResponseOf<'/api/v1/workspaces/{ws}', 'get'>;
export type NewWorkspace = RequestOf<'/api/v1/workspaces', 'post'>;
export type WorkspaceState = Workspace['state'];
/** The editor the workspace pod runs (GET /workspaces/{ws} only). */
export type EditorInfo = NonNullable<Workspace['editor']>;

export type Variable = ItemOf<'/api/v1/workspaces/{ws}/variables'>;
export type Secret = ItemOf<'/api/v1/workspaces/{ws}/secrets'>;

export type Landscape = ResponseOf<'/api/v1/workspaces/{ws}/landscape', 'get'>;
export type Service = Landscape['services'][number];
export type ServicePort = NonNullable<Service['ports']>[number];
export type Plan = ResponseOf<'/api/v1/workspaces/{ws}/landscape/plan', 'get'>;
export type PlanService = Plan['services'][number];
export type PlanImage = NonNullable<Plan['images']>[number];

export type Stage = ResponseOf<'/api/v1/workspaces/{ws}/stages/{stage}', 'get'>;
export type StageName = Stage['stage'];
export type StageRun = Stage['runs'][number];
export type Step = StageRun['steps'][number];
export type LogPage = ResponseOf<'/api/v1/workspaces/{ws}/landscape/services/{service}/logs', 'get'>;
/** One line of a log page, and of a followed log (application/x-ndjson). */
export type LogLine = LogPage['lines'][number];

export type ManagedService = ResponseOf<'/api/v1/managed-services/{ms}', 'get'>;
export type ManagedServiceStatus = ManagedService['status'];
export type ManagedServiceCredentials = ResponseOf<'/api/v1/managed-services/{ms}/reveal', 'post'>;
export type ManagedDump = ItemOf<'/api/v1/managed-services/{ms}/dumps'>;
export type Provider = ItemOf<'/api/v1/providers'>;

/** The data of an event of GET /api/v1/events (spec 6). */
export type SvcEvent = paths['/api/v1/events']['get']['responses'][200]['content']['text/event-stream'];
export type EventType = SvcEvent['type'];

/** A plan of GET /plans: of workspaces, of services, or of a managed provider. */
export type InstallationPlan = ItemOf<'/api/v1/plans'>;
/** A workspace plan: its editor pod's limits and default storage. */
export type WorkspacePlan = InstallationPlan & Required<Pick<InstallationPlan, 'cpu_millis' | 'memory_mib' | 'storage_gib'>> & { kind: 'workspace' };
