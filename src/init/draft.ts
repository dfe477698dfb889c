// What `svc init` gathers from a repository's files before it writes svc.yml: steps, services with the comment
// saying where each came from, and everything it could not map (said at the top of the file).
export interface DraftStep {
  name?: string;
  run: string;
}

export interface DraftPort {
  port: number;
  public?: boolean;
  routes?: Array<{ path: string }>;
}

export type DraftService =
  | { type: 'steps'; steps: DraftStep[]; env?: Record<string, string>; ports?: DraftPort[]; needs?: string[] }
  | { type: 'container'; image: string; command?: string[]; args?: string[]; env?: Record<string, string>; ports?: DraftPort[]; needs?: string[]; mounts?: Array<{ from: string; to: string }> }
  | { type: 'managed'; provider: string; providerVersion?: string; config?: Record<string, string> };

export interface Draft {
  /** The files read, in the order they were read (e.g. `docker-compose.yml`). */
  sources: string[];
  prepare: DraftStep[];
  test: DraftStep[];
  services: Map<string, { service: DraftService; origin: string }>;
  /** Things found but not mapped, each a sentence naming the file. */
  unmapped: string[];
  /** Things mapped with an assumption the author should check. */
  assumptions: string[];
}

export const emptyDraft = (): Draft => ({ sources: [], prepare: [], test: [], services: new Map(), unmapped: [], assumptions: [] });

/** A service name svc accepts (`^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$`) made from any name (`My_App` -> `my-app`). */
export function serviceName(raw: string): string {
  let name = raw.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^[^a-z]+/, '').replace(/-+/g, '-').slice(0, 32).replace(/-+$/, '');
  if (name === '' || name === 'ide') name = `svc-${name || 'service'}`;
  return name;
}

/** Adds a service under a free name (a second `web` becomes `web-2`); returns the name it got. */
export function addService(draft: Draft, wanted: string, service: DraftService, origin: string): string {
  const base = serviceName(wanted);
  let name = base;
  for (let n = 2; draft.services.has(name); n++) name = `${base.slice(0, 29)}-${n}`;
  draft.services.set(name, { service, origin });
  return name;
}

/** Environment variable names svc accepts; the rest are reported. */
export const envNameOk = (name: string) => /^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name) && !/^SVC_/.test(name);

/**
 * `${VAR}` and `$VAR` (compose, devcontainer `${localEnv:VAR}`) become `${{ env.VAR }}`, a workspace variable;
 * `${VAR:-default}` becomes its default, so the file syncs without the variable.
 */
export function templateOf(value: string): { value: string; variables: string[]; defaults: string[] } {
  const variables: string[] = [];
  const defaults: string[] = [];
  const replaced = value.replace(/\$\{(?:localEnv:|containerEnv:)?([A-Za-z_][A-Za-z0-9_]*)(?::?([-?+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, braced, operator, fallback, bare) => {
    const name = braced ?? bare;
    if (operator === '-') {
      defaults.push(name);
      return fallback;
    }
    variables.push(name);
    return `\${{ env.${name} }}`;
  });
  return { value: replaced, variables, defaults };
}
