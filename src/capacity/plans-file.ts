// The operator's plans file (`--plans-file` / SVC_PLANS_FILE, docs/capacity.md): YAML checked against the TypeBox
// schema below, then turned into the installation's plans. A file that breaks a rule stops the server with a
// message naming the place, as any other bad setting does.
import { readFile } from 'node:fs/promises';
import { Ajv, type ErrorObject } from 'ajv';
import { Type, type Static } from 'typebox';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../core/config.ts';
import { sizeInMiB } from '../landscape/index.ts';
import { builtInPlans, type InstallationPlans, type ServicePlan, type WorkspacePlan } from './plans.ts';

const planIdPattern = '^[a-z0-9][a-z0-9-]{0,62}$';
const PlanId = Type.String({ pattern: planIdPattern, patternErrorMessage: 'must be a plan id: lowercase letters, digits and dashes, at most 63 characters' });
const Cpu = Type.Number({ exclusiveMinimum: 0, maximum: 1024, description: 'CPUs, e.g. 0.25 or 2 (to a thousandth)' });
const Memory = Type.Union([
  Type.Integer({ minimum: 16, description: 'MiB' }),
  Type.String({ pattern: '^[0-9]+(\\.[0-9]+)? ?(Mi|MiB|Gi|GiB)$', patternErrorMessage: 'must be a size such as 512MiB or 4GiB' }),
]);
const Title = Type.String({ minLength: 1, maxLength: 100 });

const WorkspacePlanEntry = Type.Object(
  { title: Type.Optional(Title), cpu: Cpu, memory: Memory, storageGib: Type.Integer({ minimum: 1, maximum: 1024 }) },
  { additionalProperties: false },
);
const ServicePlanEntry = Type.Object(
  {
    title: Type.Optional(Title),
    cpu: Cpu,
    memory: Memory,
    maxReplicas: Type.Integer({ minimum: 1, maximum: 100 }),
    availability: Type.Optional(Type.Union([Type.Literal('always'), Type.Literal('on-demand')])),
  },
  { additionalProperties: false },
);
const Kind = <T extends typeof WorkspacePlanEntry | typeof ServicePlanEntry>(entry: T) =>
  Type.Object({ default: PlanId, plans: Type.Record(Type.String({ pattern: planIdPattern }), entry, { minProperties: 1 }) }, { additionalProperties: false });

const Bound = Type.Integer({ minimum: 0 });
const ManagedPlanEntry = Type.Object(
  { title: Type.Optional(Title), resources: Type.Record(Type.String({ pattern: '^[a-z][a-zA-Z]*$' }), Type.Object({ value: Bound, min: Bound, max: Bound }, { additionalProperties: false }), { minProperties: 1 }) },
  { additionalProperties: false },
);
const ManagedProvider = Type.Object(
  { default: PlanId, plans: Type.Record(Type.String({ pattern: planIdPattern }), ManagedPlanEntry, { minProperties: 1 }) },
  { additionalProperties: false },
);

export const PlansFileSchema = Type.Object(
  { workspace: Kind(WorkspacePlanEntry), service: Kind(ServicePlanEntry), managed: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z][a-z0-9-]*$' }), ManagedProvider)) },
  { additionalProperties: false },
);
type PlansFile = Static<typeof PlansFileSchema>;

let validate: ReturnType<Ajv['compile']> | undefined;

/** The plans of `text` (the file's YAML); ConfigError naming the place and the rule when it breaks one. */
export function parsePlansFile(text: string, file = 'plans file'): InstallationPlans {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`${file}: ${(error as Error).message}`);
  }
  validate ??= new Ajv({ allErrors: true, strict: false, verbose: true }).compile(PlansFileSchema);
  if (!validate(data)) throw new ConfigError(`${file}: ${plainErrors(validate.errors ?? []).slice(0, 5).map(describeError).join('; ')}`);
  const plans = data as PlansFile;
  const result: InstallationPlans = {
    workspace: {
      default: plans.workspace.default,
      plans: Object.entries(plans.workspace.plans).map(([id, plan]): WorkspacePlan => ({ kind: 'workspace', id, title: plan.title ?? id, ...limitsOf(plan, file, `workspace.plans.${id}`), storageGib: plan.storageGib })),
    },
    service: {
      default: plans.service.default,
      plans: Object.entries(plans.service.plans).map(([id, plan]): ServicePlan => ({
        kind: 'service', id, title: plan.title ?? id, ...limitsOf(plan, file, `service.plans.${id}`), maxReplicas: plan.maxReplicas, availability: plan.availability ?? 'always',
      })),
    },
  };
  if (plans.managed) result.managed = managedPlansOf(plans.managed, file);
  for (const kind of ['workspace', 'service'] as const) {
    const ids = result[kind].plans.map((plan) => plan.id);
    if (!ids.includes(result[kind].default)) throw new ConfigError(`${file}: ${kind}.default is "${result[kind].default}", which is not one of its plans (${ids.join(', ')})`);
  }
  return result;
}

/** The `managed` section: each provider's plans with values within their bounds and a default among them. */
function managedPlansOf(section: NonNullable<PlansFile['managed']>, file: string): NonNullable<InstallationPlans['managed']> {
  const result: NonNullable<InstallationPlans['managed']> = {};
  for (const [provider, entry] of Object.entries(section)) {
    const plans = Object.entries(entry.plans).map(([id, plan]) => ({ id, title: plan.title ?? id, resources: plan.resources }));
    for (const plan of plans) {
      for (const [name, { value, min, max }] of Object.entries(plan.resources)) {
        if (!(min <= value && value <= max)) throw new ConfigError(`${file}: managed.${provider}.plans.${plan.id}.resources.${name}: value ${value} is not within min ${min} and max ${max}`);
      }
    }
    if (!plans.some((plan) => plan.id === entry.default)) {
      throw new ConfigError(`${file}: managed.${provider}.default is "${entry.default}", which is not one of its plans (${plans.map((plan) => plan.id).join(', ')})`);
    }
    result[provider] = { default: entry.default, plans };
  }
  return result;
}

/** The plans of the installation: the file's when one is set, else the built-in ones. */
export async function loadPlans(file: string | undefined): Promise<InstallationPlans> {
  if (file === undefined) return builtInPlans;
  const text = await readFile(file, 'utf8').catch((error: Error) => {
    throw new ConfigError(`plans file: ${error.message}`);
  });
  return parsePlansFile(text, file);
}

function limitsOf(plan: { cpu: number; memory: number | string }, file: string, place: string): { cpuMillis: number; memoryMiB: number } {
  const cpuMillis = Math.round(plan.cpu * 1000);
  const memoryMiB = sizeInMiB(plan.memory);
  if (cpuMillis < 1) throw new ConfigError(`${file}: ${place}.cpu is below a thousandth of a CPU`);
  if (memoryMiB === undefined || !Number.isInteger(memoryMiB) || memoryMiB < 16) throw new ConfigError(`${file}: ${place}.memory must be a whole number of MiB, at least 16 MiB`);
  return { cpuMillis, memoryMiB };
}

/** Of a size's two forms (a number, a text), only the text's rule is said: "anyOf" and "must be integer" add nothing. */
function plainErrors(errors: ErrorObject[]): ErrorObject[] {
  const paths = new Set(errors.filter((e) => e.keyword === 'pattern').map((e) => e.instancePath));
  return errors.filter((e) => e.keyword !== 'anyOf' && !(e.keyword === 'type' && paths.has(e.instancePath)));
}

function describeError(error: ErrorObject): string {
  const place = error.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'the file';
  if (error.keyword === 'additionalProperties') return `${place}: unknown key "${(error.params as { additionalProperty: string }).additionalProperty}"`;
  const rule = (error.parentSchema as { patternErrorMessage?: string } | undefined)?.patternErrorMessage;
  return `${place} ${error.keyword === 'pattern' && rule ? rule : error.message}`;
}
