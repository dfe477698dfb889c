// Roles and the permissions they grant. Pure: the store supplies the roles, this computes the list.
// docs/permissions.md is the reader's version of this file; a test keeps the two in step.

export const orgRoles = ['owner', 'member'] as const;
export const teamRoles = ['admin', 'developer', 'viewer'] as const;
export type OrgRole = (typeof orgRoles)[number];
export type TeamRole = (typeof teamRoles)[number];

export const orgPermissionNames = [
  'org.view',
  'org.update',
  'org.delete',
  'org.members.view',
  'org.members.manage',
  'team.create',
] as const;

export const teamPermissionNames = [
  'team.view',
  'team.update',
  'team.delete',
  'team.members.view',
  'team.members.manage',
  'workspace.view',
  'workspace.create',
  'workspace.update',
  'workspace.delete',
  'workspace.use',
  'workspace.exec',
  'landscape.view',
  'landscape.sync',
  'variables.manage',
] as const;

export type OrgPermission = (typeof orgPermissionNames)[number];
export type TeamPermission = (typeof teamPermissionNames)[number];
export type Permission = 'platform.admin' | OrgPermission | TeamPermission;

const viewer: TeamPermission[] = ['team.view', 'team.members.view', 'workspace.view', 'landscape.view'];
const developer: TeamPermission[] = [
  ...viewer,
  'workspace.create',
  'workspace.update',
  'workspace.delete',
  'workspace.use',
  'workspace.exec',
  'landscape.sync',
  'variables.manage',
];

export const teamRolePermissions: Record<TeamRole, readonly TeamPermission[]> = {
  viewer,
  developer,
  admin: teamPermissionNames,
};

export const orgRolePermissions: Record<OrgRole, readonly OrgPermission[]> = {
  member: ['org.view', 'org.members.view'],
  owner: orgPermissionNames,
};

export interface Standing {
  /** Holds platform.admin: every permission everywhere. */
  isAdmin: boolean;
  orgRole?: OrgRole;
  teamRole?: TeamRole;
}

/** Permissions on an organization. Empty means the org is invisible to the caller (404). */
export function orgPermissions(standing: Standing): OrgPermission[] {
  if (standing.isAdmin) return [...orgPermissionNames];
  return standing.orgRole ? [...orgRolePermissions[standing.orgRole]] : [];
}

/**
 * Permissions on a team. Org owners act as admins of every team of their org.
 * Empty means the team is invisible to the caller (404).
 */
export function teamPermissions(standing: Standing): TeamPermission[] {
  if (standing.isAdmin || standing.orgRole === 'owner') return [...teamPermissionNames];
  return standing.teamRole ? [...teamRolePermissions[standing.teamRole]] : [];
}

export function isOrgRole(value: string): value is OrgRole {
  return (orgRoles as readonly string[]).includes(value);
}

export function isTeamRole(value: string): value is TeamRole {
  return (teamRoles as readonly string[]).includes(value);
}
