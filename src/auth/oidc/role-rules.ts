// Group claims to roles: which rules a person's claims satisfy, and what changes bring their roles given by the
// provider's rules to that. Pure; src/people/oidc-roles.ts carries the changes out. A role given by hand ('manual')
// is never changed or taken by a rule; a rule's role changed by hand becomes a hand-given one.
import type { OrgRole } from '../../store/orgs.ts';
import type { TeamRole } from '../../store/teams.ts';
import type { RoleRule, RuleGrant } from './provider-settings.ts';

/** The source recorded with a role a rule gave. */
export const ruleSource = (providerId: string, ruleName: string) => `oidc:${providerId}:${ruleName}`;
export const providerSourcePrefix = (providerId: string) => `oidc:${providerId}:`;

/** A claim's values: a string, or the strings of a list (other values count as none). */
export function claimValues(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

export function matchingRules(rules: RoleRule[], claims: Record<string, unknown>): RoleRule[] {
  return rules.filter((rule) => claimValues(claims, rule.claim).includes(rule.value));
}

export interface DesiredRoles {
  /** The source of the rule giving platform.admin, if one does. */
  admin: string | null;
  teams: Map<number, { orgId: string; role: TeamRole; source: string }>;
  orgs: Map<string, { role: OrgRole; source: string }>;
}

const TEAM_RANK: Record<TeamRole, number> = { viewer: 0, developer: 1, admin: 2 };

/**
 * The roles the matching rules give, with references resolved (`teams`/`orgs`: reference -> ids; a rule naming a
 * team or org that does not exist gives nothing). Of two rules on one team the higher role wins; a team role makes
 * its organization's membership too.
 */
export function desiredRoles(
  providerId: string,
  matched: RoleRule[],
  teams: Map<number | string, { id: number; org_id: string }>,
  orgs: Map<string, string>,
): DesiredRoles {
  const desired: DesiredRoles = { admin: null, teams: new Map(), orgs: new Map() };
  for (const rule of matched) {
    const source = ruleSource(providerId, rule.name);
    const grant: RuleGrant = rule.grant;
    if (grant.kind === 'platform-admin') desired.admin ??= source;
    else if (grant.kind === 'team') {
      const team = teams.get(grant.team);
      if (!team) continue;
      const current = desired.teams.get(team.id);
      if (!current || TEAM_RANK[grant.role] > TEAM_RANK[current.role]) desired.teams.set(team.id, { orgId: team.org_id, role: grant.role, source });
    } else {
      const orgId = orgs.get(grant.org);
      if (!orgId) continue;
      const current = desired.orgs.get(orgId);
      if (!current || (grant.role === 'owner' && current.role !== 'owner')) desired.orgs.set(orgId, { role: grant.role, source });
    }
  }
  for (const [, team] of desired.teams) if (!desired.orgs.has(team.orgId)) desired.orgs.set(team.orgId, { role: 'member', source: team.source });
  return desired;
}

export interface CurrentRoles {
  admin: { isAdmin: boolean; source: string | null };
  teams: Array<{ team_id: number; org_id: string; role: TeamRole; source: string }>;
  orgs: Array<{ org_id: string; role: OrgRole; source: string }>;
}

export type RoleChange =
  | { kind: 'admin'; grant: boolean; source: string }
  | { kind: 'org'; orgId: string; role: OrgRole | null; source: string }
  | { kind: 'team'; teamId: number; orgId: string; role: TeamRole | null; source: string };

const byRule = (source: string) => source.startsWith('oidc:');

/** The changes, in the order to make them: orgs joined before their teams, teams left before their orgs. */
export function roleChanges(providerId: string, current: CurrentRoles, desired: DesiredRoles): RoleChange[] {
  const ours = providerSourcePrefix(providerId);
  const changes: RoleChange[] = [];
  const admin = current.admin;
  if (desired.admin && !admin.isAdmin) changes.push({ kind: 'admin', grant: true, source: desired.admin });
  if (!desired.admin && admin.isAdmin && admin.source?.startsWith(ours)) changes.push({ kind: 'admin', grant: false, source: admin.source });
  const orgNow = new Map(current.orgs.map((o) => [o.org_id, o]));
  const teamNow = new Map(current.teams.map((t) => [t.team_id, t]));
  for (const [orgId, want] of desired.orgs) {
    const now = orgNow.get(orgId);
    if (now && !byRule(now.source)) continue;
    if (!now || now.role !== want.role || now.source !== want.source) changes.push({ kind: 'org', orgId, role: want.role, source: want.source });
  }
  for (const [teamId, want] of desired.teams) {
    const now = teamNow.get(teamId);
    if (now && !byRule(now.source)) continue;
    if (!now || now.role !== want.role || now.source !== want.source) changes.push({ kind: 'team', teamId, orgId: want.orgId, role: want.role, source: want.source });
  }
  for (const now of current.teams) {
    if (now.source.startsWith(ours) && !desired.teams.has(now.team_id)) changes.push({ kind: 'team', teamId: now.team_id, orgId: now.org_id, role: null, source: now.source });
  }
  for (const now of current.orgs) {
    if (now.source.startsWith(ours) && !desired.orgs.has(now.org_id)) changes.push({ kind: 'org', orgId: now.org_id, role: null, source: now.source });
  }
  return changes;
}
