// The landscape as written in svc.yml (schema svc/v1, spec 2.8) and its normal form.
import type { availabilities, healthModes, serviceTypes } from './names.ts';

export type ServiceType = (typeof serviceTypes)[number];
export type Availability = (typeof availabilities)[number];
export type HealthMode = (typeof healthModes)[number];
export type EnvValue = string | number | boolean;
/** Any value YAML can hold once read: what `config` of a managed service carries. */
export type ConfigValue = string | number | boolean | null | ConfigValue[] | { [key: string]: ConfigValue };

export interface Step {
  name?: string;
  run: string;
}

export interface Route {
  path: string;
  strip?: boolean;
}

export interface Port {
  port: number;
  public?: boolean;
  routes?: Route[];
}

export interface HealthCheck {
  port: number;
  path?: string;
  mode?: HealthMode;
}

export interface Mount {
  from: string;
  to: string;
}

/** Keys shared by `steps` and `container` services. */
export interface RunningServiceKeys {
  plan?: string;
  replicas?: number;
  maxReplicas?: number;
  availability?: Availability;
  idleTimeoutMinutes?: number;
  env?: Record<string, EnvValue>;
  ports?: Port[];
  health?: HealthCheck;
  mounts?: Mount[];
  needs?: string[];
}

export interface StepsService extends RunningServiceKeys {
  type: 'steps';
  steps: Step[];
  image?: string;
  nixWritable?: boolean;
}

export interface ContainerService extends RunningServiceKeys {
  type: 'container';
  image: string;
  command?: string[];
  args?: string[];
  runAsUser?: number;
}

export interface ManagedService {
  type: 'managed';
  provider: string;
  providerVersion?: string;
  plan?: string;
  resources?: Record<string, number | string>;
  config?: Record<string, ConfigValue>;
  secrets?: Record<string, string>;
  backups?: boolean;
}

export interface ForwardService {
  type: 'forward';
  target: string;
  routes: Route[];
}

export type Service = StepsService | ContainerService | ManagedService | ForwardService;

/** A landscape file as written, `x-` keys and YAML anchors already gone. */
export interface Landscape {
  schema: 'svc/v1';
  prepare?: Step[];
  test?: Step[];
  services?: Record<string, Service>;
}

// ---- Normal form: every default applied, so two files describing the same landscape are equal. ----

export interface NormalRoute {
  path: string;
  strip: boolean;
}

export interface NormalPort {
  port: number;
  public: boolean;
  routes: NormalRoute[];
}

export interface NormalHealthCheck {
  port: number;
  path: string;
  mode: HealthMode;
}

export interface NormalRunningServiceKeys {
  plan: string;
  replicas: number;
  maxReplicas: number;
  availability: Availability;
  idleTimeoutMinutes: number;
  /** Numbers and booleans become strings. */
  env: Record<string, string>;
  ports: NormalPort[];
  health?: NormalHealthCheck;
  mounts: Mount[];
  needs: string[];
}

export interface NormalStepsService extends NormalRunningServiceKeys {
  type: 'steps';
  steps: Step[];
  image?: string;
  nixWritable: boolean;
}

export interface NormalContainerService extends NormalRunningServiceKeys {
  type: 'container';
  image: string;
  command?: string[];
  args?: string[];
  runAsUser?: number;
}

export interface NormalManagedService {
  type: 'managed';
  provider: string;
  providerVersion?: string;
  plan?: string;
  /** Sizes with a unit become MiB numbers. */
  resources: Record<string, number>;
  config: Record<string, ConfigValue>;
  secrets: Record<string, string>;
  backups: boolean;
}

export interface NormalForwardService {
  type: 'forward';
  target: string;
  routes: NormalRoute[];
}

export type NormalService = NormalStepsService | NormalContainerService | NormalManagedService | NormalForwardService;

export interface NormalLandscape {
  schema: 'svc/v1';
  prepare: Step[];
  test: Step[];
  services: Record<string, NormalService>;
}

// ---- Installation defaults: passed in by the caller, never hard-coded in the checks. ----

/** What a service plan gives a `steps` or `container` service that does not say otherwise. */
export interface ServicePlanDefaults {
  /** The plan's maximum of replicas, which is also the default of `maxReplicas`. */
  maxReplicas: number;
  availability: Availability;
}

export interface LandscapeDefaults {
  /** Plan of `steps` and `container` services that name none. */
  servicePlan: string;
  /** Service plans of the installation (`GET /api/v1/plans`, kind service). */
  servicePlans: Readonly<Record<string, ServicePlanDefaults>>;
  /**
   * True when `servicePlans` lists every plan of the installation: a plan the file names that is not listed is
   * then an error (`unknown-plan`). False where the catalog is not at hand (offline `svc lint`).
   */
  servicePlansComplete: boolean;
  /** Used for a plan that `servicePlans` does not list. */
  unlistedPlan: ServicePlanDefaults;
  /** Minutes without requests before an on-demand service sleeps, when the file does not say. */
  idleTimeoutMinutes: number;
}

export const defaultLandscapeDefaults: LandscapeDefaults = Object.freeze({
  servicePlan: 'standard',
  servicePlans: Object.freeze({ standard: Object.freeze({ maxReplicas: 10, availability: 'always' as const }) }),
  servicePlansComplete: false,
  unlistedPlan: Object.freeze({ maxReplicas: 10, availability: 'always' as const }),
  idleTimeoutMinutes: 30,
});

/** The defaults a service plan id stands for. */
export function servicePlanDefaults(defaults: LandscapeDefaults, plan: string): ServicePlanDefaults {
  return Object.hasOwn(defaults.servicePlans, plan) ? defaults.servicePlans[plan] : defaults.unlistedPlan;
}
