// What the landscape-check worker computes for one file: the checked file, its normal form and, when asked, the
// plan from the deployed landscape to it with its templates filled in (the environments Sync would give each
// service). Pure; landscape-checker.ts runs it off the event loop, since planning a big file costs as much as
// reading it.
import { problemType, type Problem, type ProblemFieldError, type ProblemName } from '../core/problems.ts';
import {
  fillTemplates,
  normalizeLandscape,
  parseLandscape,
  placeProblem,
  planLandscape,
  type LandscapeError,
  type LandscapePlan,
  type NormalLandscape,
  type TemplateContext,
} from '../landscape/index.ts';
import { builtInPlans, landscapeDefaultsOf, type InstallationPlans } from '../capacity/plans.ts';
import { managedCatalog } from '../managed/catalog.ts';
import { catalogErrors } from '../managed/check.ts';
import { withGeneratedSecrets } from '../managed/generated-secrets.ts';
import { withManagedRestarts } from '../managed/plan-restarts.ts';
import { managedServiceValues } from '../managed/service-values.ts';
import type { Catalog } from '../managed/catalog.ts';
import type { DeployedEnv } from './deployment.ts';

export interface PlanRequest {
  /** The deployed landscape to plan from (null: nothing deployed or torn down). */
  previous: NormalLandscape | null;
  /** The environments the deployed services got at the last Sync. */
  before: DeployedEnv;
  /** What the templates are filled in with now (variables, secrets, addresses). */
  context: TemplateContext;
  /** The versions of the workspace's managed-service instances by name (an instance keeps its version). */
  managedVersions?: Readonly<Record<string, string>>;
  /**
   * The landscape last synced even when torn down (`previous` otherwise): its managed services' instances still
   * exist (paused after a Teardown), so their update constraints hold against it.
   */
  created?: NormalLandscape | null;
  /** The workspace's seed of the managed secrets the file leaves out (generated-secrets.ts); none: not generated. */
  generatedSecretsSeed?: string;
  /**
   * Each deployed managed service's `secrets` as the last Sync filled them in, by service name: one whose value
   * changed since (a new password in the vault) restarts its server, and the plan says so.
   */
  managedSecretsBefore?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export interface LandscapeCheckRequest {
  text: string;
  plan?: PlanRequest;
  /** Provider versions the operator disabled (`provider:version`, --managed-disable). */
  managedDisabled?: readonly string[];
  /** The installation's plans (src/capacity); the built-in ones when absent. */
  plans?: InstallationPlans;
}

/** A problem as plain data: it crosses from the worker by structured clone, which keeps no class. */
export interface ProblemData {
  name: ProblemName;
  status: number;
  detail?: string;
  title: string;
  errors?: ProblemFieldError[];
  headers: Record<string, string>;
  extra: Record<string, unknown>;
}

export type PlannedLandscape =
  | {
      filled: NormalLandscape;
      env: DeployedEnv;
      plan: LandscapePlan;
      problem?: undefined;
      /** Secrets the file uses that have no value (filled in empty here): the plan is shown, a Sync is refused with this. */
      missingSecrets?: ProblemData;
    }
  | { problem: ProblemData };

export type LandscapeCheck =
  | { state: 'checked'; errors: LandscapeError[]; omitted: number; normal?: NormalLandscape; planned?: PlannedLandscape }
  /** Checking took longer than the budget, or more memory than a check may use; the check was stopped. */
  | { state: 'too-complex'; budgetMs: number };

/** Catalog errors listed at most, as for the file's own errors (parseLandscape's maxErrors); the rest are counted. */
const listedErrors = 100;

export function checkLandscapeText(request: LandscapeCheckRequest): LandscapeCheck {
  const plans = request.plans ?? builtInPlans;
  const defaults = landscapeDefaultsOf(plans);
  const parsed = parseLandscape(request.text, { defaults });
  if (!parsed.landscape) return { state: 'checked', errors: parsed.errors, omitted: parsed.omitted };
  // Managed services against the catalog; the update constraints need the deployed landscape, which a plan has.
  const catalog = managedCatalog(request.managedDisabled, plans);
  const created = request.plan?.created !== undefined ? request.plan.created : (request.plan?.previous ?? null);
  const managed = catalogErrors(request.text, parsed.landscape, created, catalog, request.plan?.managedVersions);
  if (managed.length > 0) return { state: 'checked', errors: managed.slice(0, listedErrors), omitted: Math.max(0, managed.length - listedErrors) };
  const normal = normalizeLandscape(parsed.landscape, defaults);
  const planned = request.plan && planFilled(request.text, normal, request.plan, catalog);
  return { state: 'checked', errors: parsed.errors, omitted: parsed.omitted, normal, planned };
}

function planFilled(text: string, normal: NormalLandscape, request: PlanRequest, catalog: Catalog, unknown: ProblemFieldError[] = []): PlannedLandscape {
  const filled = fillTemplates(normal, { ...request.context, services: servicesContext(normal, request, catalog) });
  if (filled.problem?.type === problemType('missing-secrets')) {
    // Spec 2.8: Plan shows what a Sync would do and names the secrets that still need a value; Sync asks for them.
    const missing = problemData(placeProblem(filled.problem, text));
    const stand = Object.fromEntries((filled.problem.extra.secrets as string[]).map((name) => [name, standIn(name, missing.errors ?? [], request.managedSecretsBefore ?? {})]));
    const planned = planFilled(text, normal, { ...request, context: { ...request.context, secrets: { ...request.context.secrets, ...stand } } }, catalog, missing.errors);
    return planned.problem ? planned : { ...planned, missingSecrets: missing };
  }
  if (filled.problem) return { problem: problemData(placeProblem(filled.problem, text)) };
  const landscape = withGeneratedSecrets(filled.landscape!, catalog, request.generatedSecretsSeed);
  const env = environmentsOf(landscape);
  // A managed service's filled-in secrets compare as its environment does (names only reach the plan).
  const secretsBefore = request.managedSecretsBefore ?? {};
  const secretsAfter = managedSecretsOf(landscape, Object.keys(secretsBefore));
  const before = { ...request.before, ...secretsBefore };
  const after = withUnknownAsBefore({ ...env, ...secretsAfter }, before, unknown);
  const plan = planLandscape(request.previous, normal, { before, after });
  return { filled: landscape, env, plan: withManagedRestarts(plan, request.previous, normal, catalog) };
}

/**
 * The values that use a secret without a value (filled in empty) compare as they were: the plan does not claim that
 * an environment variable or a managed service's password changes to what the Sync will never apply.
 */
function withUnknownAsBefore(after: DeployedEnv, before: DeployedEnv, unknown: ProblemFieldError[]): DeployedEnv {
  const compared: DeployedEnv = { ...after };
  for (const { pointer } of unknown) {
    const place = envPlaceOf(pointer);
    if (!place || !Object.hasOwn(before[place.service] ?? {}, place.key)) continue;
    compared[place.service] = { ...compared[place.service], [place.key]: before[place.service][place.key] };
  }
  return compared;
}

/** `/services/web/env/K` or `/services/db/secrets/K` as its service and key; undefined for any other place. */
function envPlaceOf(pointer: string): { service: string; key: string } | undefined {
  const [, services, service, field, key, deeper] = pointer.split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (services !== 'services' || (field !== 'env' && field !== 'secrets') || key === undefined || deeper !== undefined) return undefined;
  return { service, key };
}

/**
 * What a secret without a value is filled in with for the plan: the value a managed service's secret got at the last
 * Sync when the file uses it there (a secret is that whole value), so what derives from it (a DSN) compares as it
 * was; else empty.
 */
function standIn(name: string, uses: ProblemFieldError[], managedBefore: Readonly<Record<string, Readonly<Record<string, string>>>>): string {
  for (const use of uses) {
    const place = use.subject === name && use.pointer.includes('/secrets/') ? envPlaceOf(use.pointer) : undefined;
    const value = place && managedBefore[place.service]?.[place.key];
    if (value !== undefined) return value;
  }
  return '';
}

function problemData(placed: Problem): ProblemData {
  const name = placed.type.replace(/^urn:svc:problem:/, '') as ProblemName;
  return { name, status: placed.status, detail: placed.detail, title: placed.title, errors: placed.errors, headers: placed.headers, extra: placed.extra };
}

/**
 * `${{ services.<name>.* }}` of the managed services, from their own filled-in secrets and config (they refer to no
 * other service). When those cannot be filled in, the full fill reports why.
 */
function servicesContext(normal: NormalLandscape, request: PlanRequest, catalog: Catalog): TemplateContext['services'] {
  const managed = Object.fromEntries(Object.entries(normal.services).filter(([, service]) => service.type === 'managed'));
  const filled = fillTemplates({ ...normal, services: managed }, { ...request.context, services: {} });
  if (!filled.landscape) return {};
  return managedServiceValues(withGeneratedSecrets(filled.landscape, catalog, request.generatedSecretsSeed), catalog, request.managedVersions ?? {});
}

/**
 * The filled-in `secrets` of the managed services of `filled` among `names` (those the last Sync recorded: a
 * deployment from before secrets were recorded has none to compare with).
 */
export function managedSecretsOf(filled: NormalLandscape, names?: readonly string[]): Record<string, Record<string, string>> {
  const secrets: Record<string, Record<string, string>> = {};
  for (const [name, service] of Object.entries(filled.services)) {
    if (service.type === 'managed' && (names === undefined || names.includes(name))) secrets[name] = service.secrets;
  }
  return secrets;
}

/** The environment each steps or container service gets, templates filled in. */
export function environmentsOf(filled: NormalLandscape): DeployedEnv {
  const env: DeployedEnv = {};
  for (const [name, service] of Object.entries(filled.services)) {
    if (service.type === 'steps' || service.type === 'container') env[name] = service.env;
  }
  return env;
}
