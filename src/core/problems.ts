// RFC 9457 problems: one error model for the whole platform.
// Every type name used anywhere is listed here and in docs/problems.md.

export const ProblemTypes = {
  badRequest: 'bad-request',
  malformedJson: 'malformed-json',
  unsupportedMediaType: 'unsupported-media-type',
  bodyTooLarge: 'body-too-large',
  uriTooLong: 'uri-too-long',
  headersTooLarge: 'headers-too-large',
  validation: 'validation',
  notFound: 'not-found',
  methodNotAllowed: 'method-not-allowed',
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  sessionRequired: 'session-required',
  csrf: 'csrf',
  signInLinkInvalid: 'sign-in-link-invalid',
  signInFailed: 'sign-in-failed',
  preconditionFailed: 'precondition-failed',
  preconditionRequired: 'precondition-required',
  idempotencyInFlight: 'idempotency-in-flight',
  idempotencyMismatch: 'idempotency-key-reused',
  idempotencyBodyTooLarge: 'idempotency-body-too-large',
  invalidCursor: 'invalid-cursor',
  rateLimited: 'rate-limited',
  conflict: 'conflict',
  nameTaken: 'name-taken',
  lastOwner: 'last-owner',
  orgNotEmpty: 'org-not-empty',
  quotaExceeded: 'quota-exceeded',
  volumeOwnerUnneeded: 'volume-owner-unneeded',
  volumeOwnerRunning: 'volume-owner-running',
  volumeOwnerFailed: 'volume-owner-failed',
  workspaceFailed: 'workspace-failed',
  wakeBlocked: 'wake-blocked',
  repositoryNotAllowed: 'repository-not-allowed',
  invalidLandscape: 'invalid-landscape',
  landscapeTooComplex: 'landscape-too-complex',
  landscapeTooLarge: 'landscape-too-large',
  planChanged: 'plan-changed',
  missingSecrets: 'missing-secrets',
  diskOverQuota: 'disk-over-quota',
  stageRunning: 'stage-running',
  workspaceNotRunning: 'workspace-not-running',
  imageUnavailable: 'image-unavailable',
  runAsUserNotAllowed: 'run-as-user-not-allowed',
  notAvailable: 'not-available',
  managedServicePaused: 'managed-service-paused',
  dumpNotSupported: 'dump-not-supported',
  managedServiceFailed: 'managed-service-failed',
  managedServiceNoSteps: 'managed-service-no-steps',
  alreadyMember: 'already-member',
  invitationPending: 'invitation-pending',
  invitationClosed: 'invitation-closed',
  invitationNeedsSignIn: 'invitation-needs-sign-in',
  invitationForAnotherAccount: 'invitation-for-another-account',
  notAMember: 'not-a-member',
  transferOpen: 'transfer-open',
  transferClosed: 'transfer-closed',
  oidcProviderUnknown: 'oidc-provider-unknown',
  oidcProviderUnavailable: 'oidc-provider-unavailable',
  oidcSignInFailed: 'oidc-sign-in-failed',
  oidcSignInRefused: 'oidc-sign-in-refused',
  oidcIdentityTaken: 'oidc-identity-taken',
  unavailable: 'unavailable',
  internal: 'internal',
} as const;

export type ProblemName = (typeof ProblemTypes)[keyof typeof ProblemTypes];

export interface ProblemFieldError {
  pointer: string;
  message: string;
  line?: number;
  column?: number;
  code?: string;
  subject?: string;
  /** Where a request error sits when it is not in the body: `query`, `path` or `header`. */
  in?: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  errors?: ProblemFieldError[];
  [extra: string]: unknown;
}

const titles: Record<ProblemName, string> = {
  'bad-request': 'Bad request',
  'malformed-json': 'The body is not valid JSON',
  'unsupported-media-type': 'Unsupported content type',
  'body-too-large': 'Request body too large',
  'uri-too-long': 'Address too long',
  'headers-too-large': 'Request headers too large',
  validation: 'Invalid input',
  'not-found': 'Not found',
  'method-not-allowed': 'Method not allowed',
  unauthenticated: 'Authentication required',
  forbidden: 'Not allowed',
  'session-required': 'A browser session is required',
  csrf: 'Cross-site request refused',
  'sign-in-link-invalid': 'This link has expired',
  'sign-in-failed': 'Sign-in failed',
  'precondition-failed': 'The resource has changed',
  'precondition-required': 'If-Match is required',
  'idempotency-in-flight': 'A request with this Idempotency-Key is still running',
  'idempotency-key-reused': 'Idempotency-Key reused with another request',
  'idempotency-body-too-large': 'Body too large for an idempotent request',
  'invalid-cursor': 'Invalid cursor',
  'rate-limited': 'Too many requests',
  conflict: 'Conflict',
  'name-taken': 'Name already taken',
  'last-owner': 'The last owner cannot leave',
  'org-not-empty': 'The organization still has teams',
  'quota-exceeded': 'Team quota exceeded',
  'volume-owner-unneeded': "No volume of the team needs a new owner",
  'volume-owner-running': "The team's volume owner change is still running",
  'volume-owner-failed': 'A volume could not be handed to the new UID',
  'workspace-failed': 'The workspace could not be set up',
  'wake-blocked': 'The workspace cannot be woken now',
  'repository-not-allowed': 'This repository address is not allowed',
  'invalid-landscape': 'The landscape file has errors',
  'landscape-too-complex': 'The landscape file is too complex to check',
  'landscape-too-large': 'The landscape file is too large',
  'plan-changed': 'The plan is out of date',
  'missing-secrets': 'Secrets have no value',
  'disk-over-quota': 'The volume is over its storage',
  'stage-running': 'The stage is already running',
  'workspace-not-running': 'The workspace is not running',
  'image-unavailable': 'The image cannot be pulled',
  'run-as-user-not-allowed': 'runAsUser is not allowed for this team',
  'not-available': 'Not available on this installation',
  'managed-service-paused': 'The managed service is paused',
  'dump-not-supported': 'This managed service makes no dumps',
  'managed-service-failed': 'A managed service does not serve',
  'managed-service-no-steps': 'A managed service has no steps to start or stop',
  'already-member': 'Already a member',
  'invitation-pending': 'An invitation for this address is pending',
  'invitation-closed': 'The invitation was accepted or revoked',
  'invitation-needs-sign-in': 'Sign in to accept this invitation',
  'invitation-for-another-account': 'This invitation is for another account',
  'not-a-member': 'Not a member of the team',
  'transfer-open': 'The workspace has an open ownership transfer',
  'transfer-closed': 'The ownership transfer is no longer open',
  'oidc-provider-unknown': 'No such sign-in provider',
  'oidc-provider-unavailable': 'The sign-in provider cannot be reached',
  'oidc-sign-in-failed': 'The sign-in with the provider failed',
  'oidc-sign-in-refused': 'This account may not sign in here',
  'oidc-identity-taken': 'This provider account is linked already',
  unavailable: 'Service unavailable',
  internal: 'Internal error',
};

/** An error that the HTTP layer renders as application/problem+json. */
export class Problem extends Error {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly errors?: ProblemFieldError[];
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(
    name: ProblemName,
    status: number,
    detail?: string,
    options: { errors?: ProblemFieldError[]; headers?: Record<string, string>; extra?: Record<string, unknown>; title?: string } = {},
  ) {
    super(detail ?? titles[name]);
    this.type = problemType(name);
    this.title = options.title ?? titles[name];
    this.status = status;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }

  toBody(instance?: string): ProblemBody {
    const body: ProblemBody = { type: this.type, title: this.title, status: this.status };
    if (this.detail !== undefined) body.detail = this.detail;
    if (instance !== undefined) body.instance = instance;
    if (this.errors !== undefined) body.errors = this.errors;
    return { ...body, ...this.extra };
  }
}

export function problemType(name: ProblemName): string {
  return `urn:svc:problem:${name}`;
}

export function problem(
  name: ProblemName,
  status: number,
  detail?: string,
  options?: ConstructorParameters<typeof Problem>[3],
): Problem {
  return new Problem(name, status, detail, options);
}

export const notFound = (what = 'resource'): Problem =>
  problem('not-found', 404, `The ${what} does not exist or you cannot see it.`);

export const forbidden = (detail = 'Your role does not allow this.'): Problem => problem('forbidden', 403, detail);

export const validationProblem = (errors: ProblemFieldError[], detail = 'The request has invalid fields.'): Problem =>
  problem('validation', 422, detail, { errors });

export function allProblemNames(): ProblemName[] {
  return Object.values(ProblemTypes);
}

export function problemTitle(name: ProblemName): string {
  return titles[name];
}
