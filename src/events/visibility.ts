// Who sees which event (spec 6: "events are those the caller may see"). Pure: the fan-out keeps each subscribed
// user's standing in memory and refreshes it when an event says it changed.

export interface Standing {
  userId: number;
  /** platform.admin: every event except other users' access.changed. */
  isAdmin: boolean;
  /** Teams the user can view: their own, and every team of an organization they own. */
  teams: ReadonlySet<number>;
  /** Organizations the user is a member of. */
  orgs: ReadonlySet<string>;
}

/** The ids of an event that decide who sees it (columns of the events table). */
export interface EventScope {
  type: string;
  team_id: number | null;
  org_id: string | null;
  user_id: number | null;
}

export const nobody = (userId: number): Standing => ({ userId, isAdmin: false, teams: new Set(), orgs: new Set() });

/**
 * A user sees an event addressed to them (`user_id`: access.changed, an operation they started, a transfer offered
 * to them); an event of a team they can view (team.view, workspace.view: every team role); an event of an
 * organization (org_id without team_id) they are a member of. Administrators see all but others' access.changed.
 */
export function maySee(standing: Standing, event: EventScope): boolean {
  if (event.user_id !== null && event.user_id === standing.userId) return true;
  if (event.type === 'access.changed') return false;
  if (standing.isAdmin) return true;
  if (event.team_id !== null) return standing.teams.has(event.team_id);
  if (event.org_id !== null) return standing.orgs.has(event.org_id);
  return false;
}

/** The `team` query filter: only events of that team. */
export function matchesTeamFilter(team: number | undefined, event: EventScope): boolean {
  return team === undefined || event.team_id === team;
}

/**
 * Standings to read again before a batch of events is delivered: the user of each access.changed (their roles
 * changed: a removed member must not get the team's next event), and the members of an organization that got a new
 * team (its owners see it, though no access.changed is sent to them).
 */
export function standingsToRefresh(events: readonly EventScope[]): { users: Set<number>; orgs: Set<string> } {
  const users = new Set<number>();
  const orgs = new Set<string>();
  for (const event of events) {
    if (event.type === 'access.changed' && event.user_id !== null) users.add(event.user_id);
    if (event.type === 'team.created' && event.org_id !== null) orgs.add(event.org_id);
  }
  return { users, orgs };
}
