// Applies a provider's role rules at a sign-in: roles its rules give are added, those its rules no longer give are
// taken away (src/auth/oidc/role-rules.ts decides), each change written to the audit log naming the rule, with
// members.updated for the team or organization and access.changed for the person.
import { desiredRoles, matchingRules, roleChanges, type RoleChange } from '../auth/oidc/role-rules.ts';
import type { OidcProviderSettings } from '../auth/oidc/provider-settings.ts';
import { publishEvent } from '../events/publish.ts';
import type { Queryable } from '../store/database.ts';
import { insertAuditEntry } from '../store/audit.ts';
import {
  deleteOrgMemberOfSource,
  deleteTeamMemberOfSource,
  lockRoleGrants,
  putOrgMemberByRule,
  putTeamMemberByRule,
  resolveOrgRefs,
  resolveTeamRefs,
  setAdminByRule,
} from '../store/oidc.ts';

/** The changes made (none when the roles were as the rules say). Runs inside the sign-in's transaction. */
export async function applyRoleRules(
  db: Queryable,
  provider: OidcProviderSettings,
  userId: number,
  claims: Record<string, unknown>,
  context: { now: Date; address: string | null },
): Promise<RoleChange[]> {
  const matched = matchingRules(provider.roleRules, claims);
  const teamRefs = provider.roleRules.flatMap((r) => (r.grant.kind === 'team' ? [r.grant.team] : []));
  const orgRefs = provider.roleRules.flatMap((r) => (r.grant.kind === 'org' ? [r.grant.org] : []));
  const desired = desiredRoles(provider.id, matched, await resolveTeamRefs(db, teamRefs), await resolveOrgRefs(db, orgRefs));
  const current = await lockRoleGrants(db, userId);
  const changes = roleChanges(provider.id, current, desired);
  const at = context.now.toISOString();
  for (const change of changes) {
    let made = true;
    if (change.kind === 'admin') await setAdminByRule(db, userId, change.grant ? change.source : null, context.now);
    else if (change.kind === 'org') {
      if (change.role) await putOrgMemberByRule(db, change.orgId, userId, change.role, change.source, context.now);
      else made = await deleteOrgMemberOfSource(db, change.orgId, userId, change.source);
      if (made) await publishEvent(db, { type: 'members.updated', at, org_id: change.orgId });
    } else {
      if (change.role) await putTeamMemberByRule(db, change.teamId, userId, change.role, change.source, context.now);
      else made = await deleteTeamMemberOfSource(db, change.teamId, userId, change.source);
      if (made) await publishEvent(db, { type: 'members.updated', at, team_id: change.teamId, org_id: change.orgId });
    }
    if (made) await auditChange(db, userId, change, context);
  }
  if (changes.length > 0) await publishEvent(db, { type: 'access.changed', at, user_id: userId });
  return changes;
}

async function auditChange(db: Queryable, userId: number, change: RoleChange, context: { now: Date; address: string | null }): Promise<void> {
  const rule = change.source.slice('oidc:'.length).replace(':', '/');
  const given = change.kind === 'admin' ? change.grant : change.role !== null;
  const [target, what, teamId] =
    change.kind === 'admin'
      ? [`/users/${userId}`, 'platform.admin', null]
      : change.kind === 'org'
        ? [`/orgs/${change.orgId}/members/${userId}`, `organization role ${change.role ?? ''}`.trim(), null]
        : [`/teams/${change.teamId}/members/${userId}`, `team role ${change.role ?? ''}`.trim(), change.teamId];
  await insertAuditEntry(db, {
    at: context.now,
    actor_id: userId,
    action: given ? 'oidc.role.grant' : 'oidc.role.revoke',
    method: 'GET',
    target,
    team_id: teamId,
    outcome: 200,
    address: context.address,
    detail: `rule ${rule}: ${given ? 'gives' : 'no longer gives'} ${what}`,
  });
}
