// Who changes a workspace's pods right now, in this server: a wake starting them, or a sleep or stop ending them.
// One at a time, so that a wake never starts the pod a sleep is ending (or the other way round) and the state
// saved afterwards is what runs. A stop never waits behind a start: a pod start may take minutes, so the stop is
// refused at once instead (the wake is an operation, and a workspace busy with one refuses sleep and stop anyway).
// A start waits behind a stop, which ends in seconds. See docs/decisions.md ("Sleep and wake race").
// Several servers on one machine (docs/topology.md): the holder also holds a PostgreSQL advisory lock on the
// workspace, so a server's sleep and another's wake never change the same pods at once either.
import type pg from 'pg';
import { problem } from '../core/problems.ts';

/** The first key of the workspaces' pod locks ('svcp'); the second is the workspace id. */
const POD_LOCK_CLASS = 0x73766370;

export type PodWork = 'start' | 'stop';

export interface GateTicket {
  id: number;
  work: PodWork;
}

export interface GateState {
  holder?: GateTicket;
  /** In the order they asked; empty while nobody holds the gate. */
  waiting: GateTicket[];
}

export type GateEvent = { type: 'request'; ticket: GateTicket } | { type: 'release'; id: number };
export type GateEffect = { type: 'grant'; id: number } | { type: 'refuse'; id: number };

export const openGate: GateState = { waiting: [] };

export function stepGate(state: GateState, event: GateEvent): { state: GateState; effects: GateEffect[] } {
  if (event.type === 'release') {
    if (state.holder?.id !== event.id) return { state, effects: [] };
    const [next, ...rest] = state.waiting;
    return { state: { holder: next, waiting: rest }, effects: next ? [{ type: 'grant', id: next.id }] : [] };
  }
  const { ticket } = event;
  const ahead = state.holder ? [state.holder, ...state.waiting] : state.waiting;
  if (ticket.work === 'stop' && ahead.some((t) => t.work === 'start')) return { state, effects: [{ type: 'refuse', id: ticket.id }] };
  if (!state.holder) return { state: { holder: ticket, waiting: [] }, effects: [{ type: 'grant', id: ticket.id }] };
  return { state: { ...state, waiting: [...state.waiting, ticket] }, effects: [] };
}

/** The gates of every workspace of this server: `run` does its work once the workspace's gate lets it through. */
export class PodGates {
  private readonly states = new Map<number, GateState>();
  private readonly tickets = new Map<number, { grant: () => void; refuse: (error: Error) => void }>();
  private nextTicket = 1;

  /** With a pool, the gate is also held across the servers of the installation. */
  constructor(private readonly pool?: pg.Pool) {}

  /** Runs `work` holding the gate; a stop asked while a wake starts the pods is refused with 409 `conflict`. */
  async run<T>(workspaceId: number, kind: PodWork, work: () => Promise<T>): Promise<T> {
    const id = this.nextTicket++;
    await new Promise<void>((grant, refuse) => {
      this.tickets.set(id, { grant, refuse });
      this.apply(workspaceId, { type: 'request', ticket: { id, work: kind } });
    });
    try {
      const unlock = await this.lockAcrossServers(workspaceId, kind);
      try {
        return await work();
      } finally {
        await unlock();
      }
    } finally {
      this.apply(workspaceId, { type: 'release', id });
    }
  }

  /** A start waits for another server's pod work; a stop is refused while another server changes the pods. */
  private async lockAcrossServers(workspaceId: number, kind: PodWork): Promise<() => Promise<void>> {
    if (!this.pool) return async () => undefined;
    const client = await this.pool.connect();
    try {
      if (kind === 'start') await client.query('SELECT pg_advisory_lock($1, $2)', [POD_LOCK_CLASS, workspaceId]);
      else if (!(await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', [POD_LOCK_CLASS, workspaceId])).rows[0].locked) {
        throw problem('conflict', 409, 'The workspace is busy (another server is changing its processes); try again in a moment.');
      }
    } catch (error) {
      client.release();
      throw error;
    }
    return async () => {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [POD_LOCK_CLASS, workspaceId]).then(
        () => client.release(),
        (error: Error) => client.release(error),
      );
    };
  }

  private apply(workspaceId: number, event: GateEvent): void {
    const { state, effects } = stepGate(this.states.get(workspaceId) ?? openGate, event);
    if (state.holder) this.states.set(workspaceId, state);
    else this.states.delete(workspaceId);
    for (const effect of effects) {
      const ticket = this.tickets.get(effect.id);
      this.tickets.delete(effect.id);
      if (effect.type === 'grant') ticket?.grant();
      else ticket?.refuse(problem('conflict', 409, 'The workspace is busy (waking up); try again when it has finished.'));
    }
  }
}
