// The operator's OpenID Connect providers (--oidc-providers / --oidc-providers-file): a JSON or YAML list, checked
// here before the server starts. Pure: the text in, the providers or an error naming the place out.
import { parse as parseYaml } from 'yaml';
import type { OrgRole } from '../../store/orgs.ts';
import type { TeamRole } from '../../store/teams.ts';

/** What a rule gives while the claim holds the value. */
export type RuleGrant =
  | { kind: 'platform-admin' }
  | { kind: 'org'; org: string; role: OrgRole }
  | { kind: 'team'; team: number | string; role: TeamRole };

export interface RoleRule {
  name: string;
  /** The claim read (the provider's groupsClaim unless the rule names another). */
  claim: string;
  value: string;
  grant: RuleGrant;
}

export interface OidcProviderSettings {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
  scopes: string[];
  /** Lower-case domains whose verified addresses may make an account at first sign-in; empty: none (invitations only). */
  allowedDomains: string[];
  groupsClaim: string;
  roleRules: RoleRule[];
}

export class ProviderSettingsError extends Error {}

const fail = (where: string, message: string): never => {
  throw new ProviderSettingsError(`OIDC providers: ${where}: ${message}`);
};

const ID = /^[a-z0-9][a-z0-9-]{0,39}$/;
const TEAM_ROLES = new Set(['admin', 'developer', 'viewer']);
const ORG_ROLES = new Set(['owner', 'member']);

function text(value: unknown, where: string, required = true): string | undefined {
  if (value === undefined || value === null) return required ? fail(where, 'is required') : undefined;
  if (typeof value !== 'string' || value.trim() === '') return fail(where, 'must be a non-empty string');
  return value.trim();
}

/** `env` resolves clientSecretEnv (the secret kept out of the file). */
export function parseProviderSettings(source: string, env: Record<string, string | undefined>): OidcProviderSettings[] {
  let data: unknown;
  try {
    data = parseYaml(source); // YAML is a superset of JSON
  } catch (error) {
    return fail('the list', `is neither JSON nor YAML (${(error as Error).message.split('\n')[0]})`);
  }
  if (data === null || data === undefined) return [];
  if (!Array.isArray(data)) return fail('the list', 'must be a list of providers');
  const providers = data.map((entry, index) => providerOf(entry, `provider ${index + 1}`, env));
  const ids = new Set<string>();
  for (const p of providers) {
    if (ids.has(p.id)) fail(`provider ${p.id}`, 'id is used twice');
    ids.add(p.id);
  }
  return providers;
}

function providerOf(entry: unknown, where: string, env: Record<string, string | undefined>): OidcProviderSettings {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail(where, 'must be an object');
  const e = entry as Record<string, unknown>;
  const known = new Set(['id', 'name', 'issuer', 'clientId', 'clientSecret', 'clientSecretEnv', 'scopes', 'allowedDomains', 'groupsClaim', 'roleRules']);
  for (const key of Object.keys(e)) if (!known.has(key)) fail(where, `unknown key "${key}"`);
  const id = text(e.id, `${where} id`)!;
  if (!ID.test(id)) fail(where, `id "${id}" must be lower-case letters, digits and dashes (at most 40)`);
  where = `provider ${id}`;
  const issuer = text(e.issuer, `${where} issuer`)!;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return fail(where, `issuer "${issuer}" is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) fail(where, 'issuer must be https:// (http:// only on loopback)');
  let clientSecret = text(e.clientSecret, `${where} clientSecret`, false);
  const secretEnv = text(e.clientSecretEnv, `${where} clientSecretEnv`, false);
  if (secretEnv !== undefined) {
    if (clientSecret !== undefined) fail(where, 'give clientSecret or clientSecretEnv, not both');
    clientSecret = env[secretEnv];
    if (!clientSecret) fail(where, `the environment variable ${secretEnv} (clientSecretEnv) is not set`);
  }
  const scopes = stringList(e.scopes, `${where} scopes`) ?? ['openid', 'email', 'profile'];
  if (!scopes.includes('openid')) scopes.unshift('openid');
  const allowedDomains = (stringList(e.allowedDomains, `${where} allowedDomains`) ?? []).map((d) => d.toLowerCase().replace(/^@/, ''));
  const groupsClaim = text(e.groupsClaim, `${where} groupsClaim`, false) ?? 'groups';
  const rules = e.roleRules ?? [];
  if (!Array.isArray(rules)) return fail(where, 'roleRules must be a list');
  const roleRules = rules.map((rule, index) => ruleOf(rule, `${where} roleRules ${index + 1}`, groupsClaim));
  const names = new Set<string>();
  for (const rule of roleRules) {
    if (names.has(rule.name)) fail(where, `rule name "${rule.name}" is used twice`);
    names.add(rule.name);
  }
  return { id, name: text(e.name, `${where} name`, false) ?? id, issuer, clientId: text(e.clientId, `${where} clientId`)!, clientSecret, scopes, allowedDomains, groupsClaim, roleRules };
}

function ruleOf(entry: unknown, where: string, groupsClaim: string): RoleRule {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail(where, 'must be an object');
  const e = entry as Record<string, unknown>;
  const known = new Set(['name', 'claim', 'value', 'platformAdmin', 'org', 'team', 'role']);
  for (const key of Object.keys(e)) if (!known.has(key)) fail(where, `unknown key "${key}"`);
  const name = text(e.name, `${where} name`)!;
  if (!ID.test(name)) fail(where, `name "${name}" must be lower-case letters, digits and dashes (at most 40)`);
  const value = text(e.value, `${where} value`)!;
  const claim = text(e.claim, `${where} claim`, false) ?? groupsClaim;
  const targets = [e.platformAdmin === true, e.org !== undefined, e.team !== undefined].filter(Boolean).length;
  if (targets !== 1) fail(where, 'give exactly one of platformAdmin: true, org or team');
  let grant: RuleGrant;
  if (e.platformAdmin === true) grant = { kind: 'platform-admin' };
  else if (e.org !== undefined) {
    const role = e.role ?? 'member';
    if (typeof role !== 'string' || !ORG_ROLES.has(role)) return fail(where, 'an org rule\'s role is owner or member');
    grant = { kind: 'org', org: text(e.org, `${where} org`)!, role: role as OrgRole };
  } else {
    const role = e.role ?? 'developer';
    if (typeof role !== 'string' || !TEAM_ROLES.has(role)) return fail(where, "a team rule's role is admin, developer or viewer");
    const team = e.team;
    if (typeof team === 'number' && Number.isInteger(team) && team > 0) grant = { kind: 'team', team, role: role as TeamRole };
    else if (typeof team === 'string' && /^[^/]+\/[^/]+$/.test(team)) grant = { kind: 'team', team, role: role as TeamRole };
    else return fail(where, 'team is a team id or "<organization name>/<team name>"');
  }
  return { name, claim, value, grant };
}

function stringList(value: unknown, where: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === 'string' ? value.split(/[\s,]+/).filter(Boolean) : value;
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'string' || v.trim() === '')) return fail(where, 'must be a list of strings');
  return (list as string[]).map((v) => v.trim());
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
