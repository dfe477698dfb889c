// The catalog (spec 2.7, 4.10): GET /providers (managed-service providers) and GET /plans (workspace plans, service
// plans and managed plans; the first two from the operator's plans file, docs/capacity.md). The catalog is small and bounded, so each answer is one page (docs/decisions.md).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { managedCatalog, type Plan, type Provider } from '../../managed/catalog.ts';
import type { ApiDeps } from '../context.ts';
import { StringEnum } from '../schemas.ts';

const tags = ['catalog'];
const updateRule = StringEnum(['live', 'restart', 'grow', 'never'], {
  description: 'how the value may change after creation: live, restart (Sync restarts the server), grow (never shrinks), never',
});
const NamedField = Type.Object({ name: Type.String(), description: Type.String() });

const ProviderSchema = Type.Object({
  name: Type.String({ description: 'the `provider` of a managed service in svc.yml' }),
  title: Type.String(),
  description: Type.String(),
  versions: Type.Array(Type.Object({ version: Type.String(), enabled: Type.Boolean(), default: Type.Boolean() }), { description: 'oldest first' }),
  default_version: Type.Union([Type.String(), Type.Null()], { description: 'newest enabled version; null when the operator disabled all' }),
  default_plan: Type.String(),
  plans: Type.Array(Type.String(), { description: 'ids of its plans (GET /plans?provider=…)' }),
  resources: Type.Array(
    Type.Object({ name: Type.String(), unit: StringEnum(['millicpu', 'MiB', 'count']), description: Type.String(), update: updateRule }),
    { description: 'what `resources` may override, within the bounds of the plan' },
  ),
  config_schema: Type.Object({}, { additionalProperties: true, description: 'JSON Schema of `config`; each property gives its update rule in x-update' }),
  secrets: Type.Array(NamedField, { description: 'names of `secrets` the provider takes' }),
  details: Type.Array(NamedField, { description: 'what an instance publishes (templates ${{ services.<name>.details.<field> }})' }),
  capabilities: Type.Object({ dump: Type.Boolean(), backups: Type.Boolean(), pause: Type.Boolean(), http: Type.Boolean({ description: 'served on a managed-service host' }) }),
});

const Bounds = Type.Object({ value: Type.Integer(), min: Type.Integer(), max: Type.Integer() });
const PlanSchema = Type.Object({
  id: Type.String(),
  kind: StringEnum(['workspace', 'service', 'managed']),
  provider: Type.Union([Type.String(), Type.Null()], { description: 'null for workspace and service plans' }),
  title: Type.String(),
  default: Type.Boolean({ description: "the provider's default plan, or the installation's default workspace or service plan" }),
  resources: Type.Optional(Type.Record(Type.String(), Bounds, { description: 'managed plans: value and bounds per resource' })),
  cpu_millis: Type.Optional(Type.Integer({ description: 'workspace and service plans: thousandths of a CPU each pod (editor pod, replica) may use' })),
  memory_mib: Type.Optional(Type.Integer({ description: 'workspace and service plans: memory of each pod; a process over it is killed' })),
  storage_gib: Type.Optional(Type.Integer({ description: 'workspace plans: the volume size a new workspace gets by default, and the most it may ask for' })),
  max_replicas: Type.Optional(Type.Integer({ description: 'service plans: most replicas, also the default of maxReplicas' })),
  availability: Type.Optional(StringEnum(['always', 'on-demand'], { description: 'service plans: default availability' })),
});

const PlansQuery = Type.Object({
  kind: Type.Optional(StringEnum(['workspace', 'service', 'managed'])),
  provider: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9-]{0,62}$', patternErrorMessage: 'must be a provider name: lowercase letters, digits and dashes, starting with a letter, at most 63 characters', description: "a provider's plans only" })),
});

export function registerCatalogRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const catalog = managedCatalog(deps.config.managedDisabled, deps.config.plans);
  const providers = catalog.providers.map(providerView);
  const plans = catalog.plans.map(planView);

  app.get(
    '/providers',
    { config: { access: 'user' }, schema: { summary: 'Providers of managed services, with versions, resources, config schema, secrets, details', tags, response: { 200: Type.Object({ items: Type.Array(ProviderSchema) }) } } },
    async () => ({ items: providers }),
  );

  app.get(
    '/plans',
    { config: { access: 'user' }, schema: { summary: 'Plans of workspaces (kind workspace), of steps and container services (kind service) and of managed services', tags, querystring: PlansQuery, response: { 200: Type.Object({ items: Type.Array(PlanSchema) }) } } },
    async (request) => {
      const { kind, provider } = request.query;
      return { items: plans.filter((p) => (kind === undefined || p.kind === kind) && (provider === undefined || p.provider === provider)) };
    },
  );
}

function providerView(provider: Provider) {
  return {
    name: provider.name,
    title: provider.title,
    description: provider.description,
    versions: provider.versionStates.map((v) => ({ ...v, default: v.version === provider.defaultVersion })),
    default_version: provider.defaultVersion ?? null,
    default_plan: provider.defaultPlan,
    plans: provider.plans.map((p) => p.id),
    resources: provider.resources,
    config_schema: provider.config,
    secrets: provider.secrets,
    details: provider.details,
    capabilities: provider.capabilities,
  };
}

function planView(plan: Plan) {
  const common = { id: plan.id, kind: plan.kind, provider: plan.provider, title: plan.title, default: plan.default };
  if (plan.kind === 'managed') return { ...common, resources: plan.resources };
  const limits = { cpu_millis: plan.cpuMillis, memory_mib: plan.memoryMiB };
  if (plan.kind === 'workspace') return { ...common, ...limits, storage_gib: plan.storageGib };
  return { ...common, ...limits, max_replicas: plan.maxReplicas, availability: plan.availability };
}
