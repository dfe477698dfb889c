// The normal form of a landscape: every default applied (from the installation's LandscapeDefaults), numbers
// and booleans of env as text, sizes in MiB, x- keys and anchors gone. Two files describing the same
// landscape have equal normal forms, which is how the runtime tells "formatting only" from a real change.
import { createHash } from 'node:crypto';
import { sizeInMiB } from './sizes.ts';
import {
  defaultLandscapeDefaults,
  servicePlanDefaults,
  type ContainerService,
  type HealthCheck,
  type Landscape,
  type LandscapeDefaults,
  type NormalLandscape,
  type NormalPort,
  type NormalRoute,
  type NormalRunningServiceKeys,
  type NormalService,
  type Port,
  type Route,
  type Service,
  type Step,
  type StepsService,
} from './types.ts';
import { mapValues } from './yaml-tree.ts';

export type LandscapeComparison = 'same' | 'formatting-only' | 'changed';

/** A landscape file's text together with its normal form. */
export interface LandscapeVersion {
  text: string;
  normal: NormalLandscape;
}

export function normalizeLandscape(landscape: Landscape, defaults: LandscapeDefaults = defaultLandscapeDefaults): NormalLandscape {
  return {
    schema: 'svc/v1',
    prepare: (landscape.prepare ?? []).map(normalStep),
    test: (landscape.test ?? []).map(normalStep),
    services: mapValues(landscape.services ?? {}, (service) => normalService(service, defaults)),
  };
}

/**
 * 'same' when the texts are identical, 'formatting-only' when they differ but describe the same landscape
 * (layout, comments, key order, x- keys, anchors, quoting), 'changed' otherwise.
 */
export function compareLandscapes(previous: LandscapeVersion, next: LandscapeVersion): LandscapeComparison {
  if (previous.text === next.text) return 'same';
  return canonicalJson(previous.normal) === canonicalJson(next.normal) ? 'formatting-only' : 'changed';
}

/** sha256 (hex) of the canonical JSON of a normal form. */
export function landscapeHash(normal: NormalLandscape): string {
  return sha256(canonicalJson(normal));
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** JSON with keys sorted at every level and no spaces; undefined values left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

function normalStep(step: Step): Step {
  return step.name === undefined ? { run: step.run } : { name: step.name, run: step.run };
}

const normalRoute = (route: Route): NormalRoute => ({ path: route.path, strip: route.strip ?? false });

const normalPort = (port: Port): NormalPort => ({ port: port.port, public: port.public ?? false, routes: (port.routes ?? []).map(normalRoute) });

function normalService(service: Service, defaults: LandscapeDefaults): NormalService {
  switch (service.type) {
    case 'steps':
      return { type: 'steps', ...runningKeys(service, defaults), steps: service.steps.map(normalStep), ...optional('image', service.image), nixWritable: service.nixWritable ?? false };
    case 'container':
      return {
        type: 'container',
        ...runningKeys(service, defaults),
        image: service.image,
        ...optional('command', service.command && [...service.command]),
        ...optional('args', service.args && [...service.args]),
        ...optional('runAsUser', service.runAsUser),
      };
    case 'managed':
      return {
        type: 'managed',
        provider: service.provider,
        ...optional('providerVersion', service.providerVersion),
        ...optional('plan', service.plan),
        resources: mapValues(service.resources ?? {}, (value) => sizeInMiB(value) ?? Number(value)),
        config: structuredClone(service.config ?? {}),
        secrets: { ...(service.secrets ?? {}) },
        backups: service.backups ?? true,
      };
    case 'forward':
      return { type: 'forward', target: service.target, routes: service.routes.map(normalRoute) };
  }
}

function runningKeys(service: StepsService | ContainerService, defaults: LandscapeDefaults): NormalRunningServiceKeys {
  const plan = service.plan ?? defaults.servicePlan;
  const planDefaults = servicePlanDefaults(defaults, plan);
  return {
    plan,
    replicas: service.replicas ?? 1,
    maxReplicas: service.maxReplicas ?? planDefaults.maxReplicas,
    availability: service.availability ?? planDefaults.availability,
    idleTimeoutMinutes: service.idleTimeoutMinutes ?? defaults.idleTimeoutMinutes,
    env: mapValues(service.env ?? {}, (value) => String(value)),
    ports: (service.ports ?? []).map(normalPort),
    ...optional('health', service.health && normalHealth(service.health)),
    mounts: (service.mounts ?? []).map((mount) => ({ from: mount.from, to: mount.to })),
    needs: [...(service.needs ?? [])],
  };
}

const normalHealth = (health: HealthCheck) => ({ port: health.port, path: health.path ?? '/', mode: health.mode ?? 'any-http' });

/** `{ key: value }`, or nothing when the value is absent: keeps optional keys out of the normal form. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
