// The installation's plans (spec 2.3 `plan`, 2.8 `plan`/`maxReplicas`, 4.10 GET /plans): what a workspace's editor
// pod and each replica of a `steps` or `container` service may use of the machine (CPU, memory) and, for a workspace,
// its volume size. Operators define them in a plans file (plans-file.ts); without one, the built-in plans below.
// Pure: the API, the landscape checks, the runtime and the quotas all read the same record.
import type { Availability, LandscapeDefaults } from '../landscape/index.ts';

export interface PlanLimits {
  /** Thousandths of a CPU (1000 = one whole CPU). */
  cpuMillis: number;
  memoryMiB: number;
}

export interface WorkspacePlan extends PlanLimits {
  kind: 'workspace';
  id: string;
  title: string;
  /** The volume size a workspace of this plan gets when its creation names none, and the most it may ask for. */
  storageGib: number;
}

export interface ServicePlan extends PlanLimits {
  kind: 'service';
  id: string;
  title: string;
  /** Most replicas; also the default of `maxReplicas`. */
  maxReplicas: number;
  availability: Availability;
}

/** A plan of a managed-service provider: a value and bounds per resource of the provider (docs/managed.md). */
export interface ManagedProviderPlan {
  id: string;
  title: string;
  resources: Record<string, { value: number; min: number; max: number }>;
}

export interface InstallationPlans {
  workspace: { default: string; plans: WorkspacePlan[] };
  service: { default: string; plans: ServicePlan[] };
  /** Providers whose plans the operator's file replaces (the catalog checks them against each provider's resources). */
  managed?: Record<string, { default: string; plans: ManagedProviderPlan[] }>;
}

/** What an installation without a plans file offers. */
export const builtInPlans: InstallationPlans = {
  workspace: {
    default: 'standard',
    plans: [
      { kind: 'workspace', id: 'small', title: 'Small', cpuMillis: 1000, memoryMiB: 2048, storageGib: 10 },
      { kind: 'workspace', id: 'standard', title: 'Standard', cpuMillis: 2000, memoryMiB: 4096, storageGib: 10 },
      { kind: 'workspace', id: 'large', title: 'Large', cpuMillis: 4000, memoryMiB: 8192, storageGib: 50 },
    ],
  },
  service: {
    default: 'standard',
    plans: [
      { kind: 'service', id: 'small', title: 'Small', cpuMillis: 250, memoryMiB: 256, maxReplicas: 5, availability: 'always' },
      { kind: 'service', id: 'standard', title: 'Standard', cpuMillis: 1000, memoryMiB: 1024, maxReplicas: 10, availability: 'always' },
    ],
  },
};

export function workspacePlan(plans: InstallationPlans, id: string): WorkspacePlan | undefined {
  return plans.workspace.plans.find((plan) => plan.id === id);
}

export function servicePlan(plans: InstallationPlans, id: string | undefined): ServicePlan | undefined {
  return plans.service.plans.find((plan) => plan.id === (id ?? plans.service.default));
}

/**
 * The landscape checks' view of the service plans: every plan is listed, so a file naming another one gets
 * `unknown-plan` at its line and column (semantics.ts).
 */
export function landscapeDefaultsOf(plans: InstallationPlans, idleTimeoutMinutes = 30): LandscapeDefaults {
  const servicePlans = Object.fromEntries(plans.service.plans.map((plan) => [plan.id, { maxReplicas: plan.maxReplicas, availability: plan.availability }]));
  const fallback = servicePlans[plans.service.default];
  return { servicePlan: plans.service.default, servicePlans, servicePlansComplete: true, unlistedPlan: fallback, idleTimeoutMinutes };
}

/** "0.25 CPU, 256 MiB" for messages. */
export function describeLimits(limits: PlanLimits): string {
  return `${formatCpu(limits.cpuMillis)} CPU, ${formatMemory(limits.memoryMiB)}`;
}

export const formatCpu = (millis: number) => String(Number((millis / 1000).toFixed(3)));
export const formatMemory = (mib: number) => (mib >= 1024 && mib % 1024 === 0 ? `${mib / 1024} GiB` : `${mib} MiB`);
