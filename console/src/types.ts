// The API's resources as the console reads them: the SDK's types, generated from the OpenAPI document
// (sdk/, `npm run sdk`); none is written by hand here. Clients ignore unknown fields.
import type { NewInvitation, User as UserOfApi } from '../../sdk/src/index.ts';

/** Who a user is, as people pickers show them (also made from members, which carry no more). */
export type User = Pick<UserOfApi, 'id' | 'email' | 'name'>;

/** An invitation; `url` (its link) only in the answer that made or renewed it, and only without a mail server. */
export type Invitation = NewInvitation;

export type {
  ApiKey,
  ApiKeyWithToken,
  Domain,
  DomainRoute,
  EditorInfo,
  FieldError,
  InvitationAccepted,
  MailState,
  OwnerTransfer,
  Landscape,
  LogLine,
  ManagedService,
  ManagedServiceCredentials,
  ManagedServiceStatus,
  Me,
  Member,
  Operation,
  OperationTimeline,
  TimelinePhase,
  Org,
  Page,
  Plan,
  PlanImage,
  PlanService,
  Problem as ProblemBody,
  RegistryCredential,
  Secret,
  Service,
  ServicePort,
  Stage,
  StageName,
  StageRun,
  Step,
  SvcEvent,
  Team,
  Variable,
  Workspace,
  WorkspacePlan,
  WorkspaceState,
} from '../../sdk/src/index.ts';
