// Keys of services in the svc.yml JSON Schema (spec 2.8): shared keys of steps and container services, the
// per-type keys, and the definitions of ports, routes, health checks and mounts.
import * as names from './names.ts';
import type { JsonSchema } from './schema-types.ts';

const extensionKeys: Record<string, JsonSchema> = {
  '^x-': { description: 'Ignored by svc: keys starting with x- hold notes and YAML anchors.' },
};

const closed = (description: string, required: string[], properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  description,
  required,
  properties,
  patternProperties: extensionKeys,
  additionalProperties: false,
});

/** A map whose key names follow `pattern` (x- keys allowed and ignored). */
function namedMap(description: string, pattern: string, patternErrorMessage: string, values: JsonSchema, extraNameRule?: JsonSchema): JsonSchema {
  const propertyNames: JsonSchema = { pattern: `^(?:x-.*|${pattern.slice(1, -1)})$`, patternErrorMessage };
  if (extraNameRule !== undefined) propertyNames.allOf = [extraNameRule];
  return { type: 'object', description, propertyNames, patternProperties: extensionKeys, additionalProperties: values };
}

const plan: JsonSchema = {
  type: 'string',
  pattern: names.planPattern,
  patternErrorMessage: 'A plan id has lowercase letters, digits and dashes, starts with a letter or digit, at most 63 characters.',
};

const image: JsonSchema = {
  type: 'string',
  maxLength: names.limits.image.max,
  pattern: names.imagePattern,
  patternErrorMessage: 'An image reference such as docker.io/library/node:20 or registry.example.com/team/app@sha256:...; at most 512 characters.',
};

const stringList = (description: string): JsonSchema => ({ type: 'array', description, items: { type: 'string' } });

const running: Record<string, JsonSchema> = {
  plan: { ...plan, description: "A service plan id (GET /api/v1/plans, kind service). Default: the installation's default service plan." },
  replicas: {
    type: 'integer',
    description: 'Pods running the service; 1 to 100, at most maxReplicas. Default 1.',
    minimum: names.limits.replicas.min,
    maximum: names.limits.replicas.max,
    default: 1,
  },
  maxReplicas: {
    type: 'integer',
    description: "Most replicas the service may be scaled to without a Sync; 1 to 100, at most the plan's maximum, which is also the default.",
    minimum: names.limits.replicas.min,
    maximum: names.limits.replicas.max,
  },
  availability: {
    type: 'string',
    description: '`always` keeps the service running; `on-demand` sleeps after idleTimeoutMinutes without requests and wakes on the next request. Default: from the plan.',
    enum: [...names.availabilities],
  },
  idleTimeoutMinutes: {
    type: 'integer',
    description: "Minutes without requests before an on-demand service sleeps; 1 to 1440. Default: the installation's default.",
    minimum: names.limits.idleTimeoutMinutes.min,
    maximum: names.limits.idleTimeoutMinutes.max,
  },
  env: namedMap(
    'Environment variables; numbers and booleans become strings. Values may use templates: ${{ workspace.id }}, ${{ workspace.devDomain }}, ${{ team.id }}, ${{ env.K }}, ${{ secrets.K }} and ${{ services.<managed service>.host|port|dsn|secret|details.<field> }}.',
    names.envNamePattern,
    'A variable name has letters, digits and _, does not start with a digit, at most 128 characters.',
    { type: ['string', 'number', 'boolean'] },
    { pattern: `^(?!${names.reservedEnvPrefix})`, patternErrorMessage: 'Names starting with SVC_ are reserved for the platform.', 'x-svc-code': 'reserved-env-name' },
  ),
  ports: { type: 'array', description: 'Ports the service listens on.', items: { $ref: '#/$defs/port' } },
  health: { $ref: '#/$defs/health' },
  mounts: { type: 'array', description: 'Files or directories of /data/app mounted elsewhere in the container.', items: { $ref: '#/$defs/mount' } },
  needs: {
    type: 'array',
    description:
      'Services this one needs: waking it wakes them, Run starts them first, and none of them sleeps while it is awake. At most 64, no duplicates, not ide.',
    maxItems: names.limits.needs.max,
    uniqueItems: true,
    items: {
      type: 'string',
      pattern: names.serviceNamePattern,
      patternErrorMessage: 'A service name has lowercase letters, digits and dashes, starts with a letter, at most 32 characters.',
      allOf: [{ pattern: `^(?!${names.editorServiceName}$)`, patternErrorMessage: 'ide is the workspace editor; a service cannot need it.', 'x-svc-code': 'needs-ide' }],
    },
  },
};

const steps: Record<string, JsonSchema> = {
  steps: { type: 'array', description: 'The steps; at least 1. All but the last run once in sequence; the last is the server.', minItems: 1, items: { $ref: '#/$defs/step' } },
  image: { ...image, description: "Custom base image built from the installation's base image; the installation's service image when absent." },
  nixWritable: { type: 'boolean', description: 'Mount /nix read-write instead of read-only. Default false.', default: false },
};

const container: Record<string, JsonSchema> = {
  image: { ...image, description: 'Image reference; pin it by digest for reproducible Syncs.' },
  command: stringList("Replaces the image's ENTRYPOINT."),
  args: stringList("Replaces the image's CMD."),
  runAsUser: {
    type: 'integer',
    description: 'User id to run as, 0 to 2147483647; only for teams a cluster admin allowed to run as root or a fixed user.',
    minimum: names.limits.runAsUser.min,
    maximum: names.limits.runAsUser.max,
  },
};

const managed: Record<string, JsonSchema> = {
  provider: {
    type: 'string',
    description: "Provider name from the installation's catalog (GET /api/v1/providers).",
    pattern: names.providerPattern,
    patternErrorMessage: 'A provider name has lowercase letters, digits and dashes, starts with a letter, at most 63 characters.',
  },
  providerVersion: {
    type: 'string',
    description: 'Provider version, 1 to 64 characters; the newest enabled version when absent. An instance keeps the version it was created with.',
    minLength: names.limits.providerVersion.min,
    maxLength: names.limits.providerVersion.max,
  },
  plan: { ...plan, description: "One of the provider's plans; the provider's default when absent." },
  resources: namedMap(
    'Overrides of plan resource values the provider allows. Sizes (memory, storage) are MiB as a number, or a size with a binary unit: 512Mi, 1.5Gi, 2GiB.',
    names.resourceNamePattern,
    'A resource name has letters, digits and _, does not start with a digit, at most 64 characters.',
    {
      type: ['integer', 'string'],
      minimum: 0,
      pattern: names.sizePattern,
      patternErrorMessage: 'A size is a number with a binary unit: 512Mi, 512MiB, 1.5Gi or 2GiB (or a plain number of MiB).',
      'x-svc-code': 'invalid-size',
    },
  ),
  config: {
    type: 'object',
    description: "Provider settings, checked against the provider's schema. Strings may use ${{ workspace.* }}, ${{ team.id }} and ${{ env.K }} templates.",
  },
  secrets: namedMap(
    "Provider secrets; each value is exactly one ${{ secrets.K }} reference (the value lives in the workspace's vault, never in the file). Sync asks for missing ones.",
    names.secretNamePattern,
    'A secret name has letters, digits and _, does not start with a digit, at most 128 characters.',
    {
      type: 'string',
      pattern: names.secretReferencePattern,
      patternErrorMessage: 'The value must be exactly one ${{ secrets.NAME }} reference.',
      'x-svc-code': 'secret-reference',
    },
  ),
  backups: { type: 'boolean', description: 'Dump nightly where the provider can. Default true.', default: true },
};

const forward: Record<string, JsonSchema> = {
  target: {
    type: 'string',
    description: 'The http(s) URL requests go to; may use templates.',
    pattern: names.forwardTargetPattern,
    patternErrorMessage: 'The target is an http:// or https:// URL (or a ${{ ... }} template giving one).',
  },
  routes: {
    type: 'array',
    description: 'Dev-domain paths forwarded to the target; at least 1. The longest matching prefix wins, on segment boundaries.',
    minItems: 1,
    items: { $ref: '#/$defs/route' },
  },
};

const route = closed('A dev-domain path prefix.', ['path'], {
  path: {
    type: 'string',
    description: 'Path prefix, such as /api; at most 256 characters. The longest matching prefix wins, on segment boundaries.',
    maxLength: names.limits.routePath.max,
    pattern: names.routePathPattern,
    patternErrorMessage: "A path starts with / and has letters, digits and the characters . _ ~ ! $ & ' ( ) * + , ; = : @ % / -.",
  },
  strip: { type: 'boolean', description: 'Remove the prefix before the request reaches the service. Default false.', default: false },
});

const port = closed('A port the service listens on.', ['port'], {
  port: { type: 'integer', description: 'The port number, 1 to 65535.', minimum: names.limits.port.min, maximum: names.limits.port.max },
  public: {
    type: 'boolean',
    description: 'Also serve the port on its own host <workspace>-<port>.<workspace domain>; public ports are unique in a landscape. Default false.',
    default: false,
  },
  routes: { type: 'array', description: 'Dev-domain paths that go to this port.', items: { $ref: '#/$defs/route' } },
});

const health = closed('How the agent checks from inside the pod that a replica is ready.', ['port'], {
  port: { type: 'integer', description: "One of the service's ports, 1 to 65535.", minimum: names.limits.port.min, maximum: names.limits.port.max },
  path: {
    type: 'string',
    description: 'The path requested; at most 256 characters. Default /.',
    maxLength: names.limits.healthPath.max,
    pattern: '^/',
    patternErrorMessage: 'A path starts with /.',
    default: '/',
  },
  mode: {
    type: 'string',
    description: '`any-http`: any HTTP answer is healthy; `http-2xx`: only 2xx answers. Default any-http.',
    enum: [...names.healthModes],
    default: 'any-http',
  },
});

const mount = closed('A file or directory of /data/app mounted elsewhere in the container.', ['from', 'to'], {
  from: {
    type: 'string',
    description: 'Path relative to /data/app; 1 to 1024 characters; must stay inside /data/app.',
    minLength: names.limits.mountPath.min,
    maxLength: names.limits.mountPath.max,
    pattern: '^[^/]',
    patternErrorMessage: 'The path is relative to /data/app: it does not start with /.',
  },
  to: {
    type: 'string',
    description: 'Absolute path in the container; at most 1024 characters.',
    maxLength: names.limits.mountPath.max,
    pattern: '^/.',
    patternErrorMessage: 'The path is absolute: it starts with / and names something below it.',
  },
});

export const serviceProperties = {
  running,
  steps,
  container,
  managed,
  forward,
  definitions: { port, route, health, mount } as Record<string, JsonSchema>,
};
