// The landscape checker's queue (issue 33, item 7): checks wait per caller and are handed out in turn, team after
// team and, within a team, user after user (the one served longest ago first), so a member who sends many heavy
// files delays only their own.
// A team never holds every worker while another team could use one, and a caller's checks (running and waiting)
// are capped: more are refused, to be tried again later. Pure: no timers, no I/O.

/** Whose check it is: the workspace's team, and the user who asked (null: the server itself). */
export interface CheckCaller {
  team: number;
  user: number | null;
  /** A queued operation's check (Sync): admitted over the caps, since refusing it would fail the operation; it still waits its turn. */
  operation?: boolean;
}

export interface CheckQueueLimits {
  /** Checks of one user, running and waiting, at most. */
  perUser: number;
  /** Checks of one team, running and waiting, at most. */
  perTeam: number;
  /** Checks of one team (and of one user) running at once, at most. */
  runningPerTeam: number;
}

export type Admission = { admitted: true } | { admitted: false; over: 'user' | 'team' };

interface TeamQueue<T> {
  running: number;
  /** When the team was served last (a count of checks handed out; -1: never). */
  served: number;
  /** Waiting checks by user key, in the order they came. */
  users: Map<string, T[]>;
}

interface Taken<T> {
  caller: CheckCaller;
  item: T;
}

const userKey = (caller: CheckCaller) => (caller.user === null ? 'server' : `user:${caller.user}`);

/**
 * The limits for a pool of `workers`: a team runs on all but one worker when there are several (one stays for the
 * others), and a user holds at most `perUser` checks.
 */
export function checkQueueLimits(workers: number, perUser = 8): CheckQueueLimits {
  return { perUser, perTeam: 2 * perUser, runningPerTeam: Math.max(1, workers - 1) };
}

export class CheckQueue<T> {
  private readonly teams = new Map<number, TeamQueue<T>>();
  /** Checks each user holds (running and waiting) and runs, across teams, and when the user was served last. */
  private readonly held = new Map<string, { held: number; running: number; served: number }>();
  /** Checks handed out so far: the clock of `served`. */
  private turn = 0;
  private readonly teamHeld = new Map<number, number>();
  private waitingCount = 0;

  constructor(private readonly limits: CheckQueueLimits) {}

  /** Checks waiting (not yet handed out). */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Queues `item` for `caller`, or says which of the caller's caps it is over. */
  admit(caller: CheckCaller, item: T): Admission {
    const user = this.held.get(userKey(caller)) ?? { held: 0, running: 0, served: -1 };
    if (user.held >= this.limits.perUser && !caller.operation) return { admitted: false, over: 'user' };
    const teamHeld = this.teamHeld.get(caller.team) ?? 0;
    if (teamHeld >= this.limits.perTeam && !caller.operation) return { admitted: false, over: 'team' };
    this.held.set(userKey(caller), { ...user, held: user.held + 1 });
    this.teamHeld.set(caller.team, teamHeld + 1);
    let team = this.teams.get(caller.team);
    if (!team) this.teams.set(caller.team, (team = { running: 0, served: -1, users: new Map() }));
    const waiting = team.users.get(userKey(caller));
    if (waiting) waiting.push(item);
    else team.users.set(userKey(caller), [item]);
    this.waitingCount++;
    return { admitted: true };
  }

  /**
   * The next check to run within the running caps: of the team served longest ago that may run one, the user served
   * longest ago (a caller that just came goes before those served already); undefined when none may run.
   */
  take(): Taken<T> | undefined {
    let chosen: { teamId: number; team: TeamQueue<T>; key: string; waiting: T[] } | undefined;
    for (const [teamId, team] of this.teams) {
      if (team.running >= this.limits.runningPerTeam || (chosen && chosen.team.served <= team.served)) continue;
      const key = this.nextUser(team);
      if (key !== undefined) chosen = { teamId, team, key, waiting: team.users.get(key)! };
    }
    if (!chosen) return undefined;
    const { teamId, team, key, waiting } = chosen;
    const user = this.held.get(key)!;
    const item = waiting.shift()!;
    if (waiting.length === 0) team.users.delete(key);
    team.served = user.served = this.turn++;
    team.running++;
    user.running++;
    this.waitingCount--;
    return { caller: callerOf(teamId, key), item };
  }

  /** The user of `team` served longest ago among those with a check waiting and room to run it. */
  private nextUser(team: TeamQueue<T>): string | undefined {
    let chosen: { key: string; served: number } | undefined;
    for (const key of team.users.keys()) {
      const user = this.held.get(key)!;
      if (user.running >= this.limits.runningPerTeam || (chosen && chosen.served <= user.served)) continue;
      chosen = { key, served: user.served };
    }
    return chosen?.key;
  }

  /** How many checks `take` would hand out now, one after the other (workers to start for them). */
  runnable(): number {
    let count = 0;
    const userRunning = new Map([...this.held].map(([key, user]) => [key, user.running]));
    for (const team of this.teams.values()) {
      let room = this.limits.runningPerTeam - team.running;
      for (const [key, waiting] of team.users) {
        const running = userRunning.get(key)!;
        const taken = Math.max(0, Math.min(room, waiting.length, this.limits.runningPerTeam - running));
        userRunning.set(key, running + taken);
        room -= taken;
        count += taken;
      }
    }
    return count;
  }

  /** A check that `take` handed out has ended: its caller's room is back. */
  finished(caller: CheckCaller): void {
    const key = userKey(caller);
    const user = this.held.get(key);
    const team = this.teams.get(caller.team);
    if (!user || !team) return;
    user.running--;
    user.held--;
    team.running--;
    this.teamHeld.set(caller.team, this.teamHeld.get(caller.team)! - 1);
    this.forgetIdle(caller.team, key);
  }

  /** Empties the queue: the checks that were waiting. */
  drain(): T[] {
    const items: T[] = [];
    for (const [teamId, team] of this.teams) {
      for (const [key, waiting] of team.users) {
        items.push(...waiting);
        const user = this.held.get(key)!;
        user.held -= waiting.length;
        this.teamHeld.set(teamId, this.teamHeld.get(teamId)! - waiting.length);
        waiting.length = 0;
        this.forgetIdle(teamId, key);
      }
    }
    this.waitingCount = 0;
    return items;
  }

  /** Keeps the maps as small as the callers with checks. */
  private forgetIdle(teamId: number, key: string): void {
    const team = this.teams.get(teamId)!;
    if (team.users.get(key)?.length === 0) team.users.delete(key);
    const user = this.held.get(key);
    if (user && user.held === 0) this.held.delete(key);
    if (team.running === 0 && team.users.size === 0) {
      this.teams.delete(teamId);
      this.teamHeld.delete(teamId);
    }
  }
}

function callerOf(team: number, key: string): CheckCaller {
  return { team, user: key === 'server' ? null : Number(key.slice('user:'.length)) };
}
