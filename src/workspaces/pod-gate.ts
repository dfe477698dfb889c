// Who changes a workspace's pods right now, in this server: a wake starting them, or a sleep or stop ending them.
// One at a time, so that a wake never starts the pod a sleep is ending (or the other way round) and the state
// saved afterwards is what runs. A stop never waits behind a start: a pod start may take minutes, so the stop is
// refused at once instead (the wake is an operation, and a workspace busy with one refuses sleep and stop anyway).
// A start waits behind a stop, which ends in seconds. See docs/decisions.md ("Sleep and wake race").
import { problem } from '../core/problems.ts';

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

  /** Runs `work` holding the gate; a stop asked while a wake starts the pods is refused with 409 `conflict`. */
  async run<T>(workspaceId: number, kind: PodWork, work: () => Promise<T>): Promise<T> {
    const id = this.nextTicket++;
    await new Promise<void>((grant, refuse) => {
      this.tickets.set(id, { grant, refuse });
      this.apply(workspaceId, { type: 'request', ticket: { id, work: kind } });
    });
    try {
      return await work();
    } finally {
      this.apply(workspaceId, { type: 'release', id });
    }
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
