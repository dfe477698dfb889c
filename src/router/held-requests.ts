// Requests held while what answers them wakes: a sleeping workspace woken and waited for (browsers only briefly,
// then the waiting page), a sleeping on-demand service woken, a starting replica waited for; then a ready replica
// of the service, in turn.
import { sleepReasonTexts } from '../workspaces/lifecycle.ts';
import { requestWake, wakeReason, wakingStatusText } from '../workspaces/wake.ts';
import { Refusal } from './refusal.ts';
import type { RouterOptions } from './router-options.ts';
import type { WorkspaceRouting, WorkspaceRoutes } from './workspace-routes.ts';

/** A held request looks again this often (or at once on an event): a woken service is answered within this. */
const HELD_POLL_MS = 50;
/**
 * How long a browser's request is held before it gets the waiting page: a wake that takes less opens the address
 * without a waiting page in between.
 */
const BROWSER_HOLD_MS = 1500;

/** How long a request may be held, and whether a browser asks (it gets the waiting page after BROWSER_HOLD_MS). */
export interface Hold {
  ms: number;
  browser: boolean;
}
const holdFor = (hold: Hold) => (hold.browser ? Math.min(hold.ms, BROWSER_HOLD_MS) : hold.ms);

export class HeldRequests {
  /** The replica each service's next request goes to (round robin). */
  private readonly turn = new Map<string, number>();

  constructor(
    private readonly routes: WorkspaceRoutes,
    private readonly options: RouterOptions,
  ) {}

  /**
   * A sleeping workspace is woken and the request held (then 503 with why it slept); browsers only briefly, then
   * they get the waiting page, which opens the address once it can be answered (waiting.ts). The request goes on
   * once the workspace runs, or while it still wakes up once `answerable` says it can be answered already (a ready
   * replica of its service: services start with the editor and are often ready before it). A request with
   * `answerable` (one a service may answer, not the editor's host) wakes the workspace services first: its editor
   * runs in the background until they answer (operations.ts).
   */
  async awake(hold: Hold, routing: WorkspaceRouting, userId: number, answerable?: (waking: WorkspaceRouting) => boolean): Promise<WorkspaceRouting> {
    const deadline = Date.now() + holdFor(hold);
    let current = routing;
    for (;;) {
      const { row } = current;
      if (row.state === 'running') return current;
      if (row.state === 'waking_up' && answerable?.(current)) return current;
      if (row.state === 'sleeping' || row.state === 'stopped') {
        const blocker = await requestWake(this.options.pool, row, userId, this.options.clock.now(), this.options.plans, { servicesFirst: answerable !== undefined });
        if (blocker) throw new Refusal(row.state === 'stopped' ? 'workspaceNotRunning' : 'wakeBlocked', blocker.reason, blocker.retryAfterSeconds);
      } else if (row.state !== 'waking_up') {
        throw new Refusal('workspaceNotRunning', row.status_detail ?? undefined, 10);
      }
      const waking = new Refusal('waking', wakingStatusText(row), 2, undefined, wakeReason(row));
      const left = deadline - Date.now();
      if (left <= 0) throw waking;
      await this.routes.changed(row.id, Math.min(left, HELD_POLL_MS));
      current = (await this.routes.get(row.id, HELD_POLL_MS)) ?? current;
    }
  }

  /** A ready replica of the service, in turn; held while it starts. */
  async replica(hold: Hold, routing: WorkspaceRouting, service: string): Promise<{ host: string }> {
    let deadline = Date.now() + hold.ms;
    let current = routing;
    let woken = false;
    // The routing may be as old as the last event (a service that became ready without its recorded status
    // changing sends none): look afresh once before answering that it is not ready, even with no hold at all.
    let looked = false;
    // on-demand services sleep only when nobody used them
    const waking = new Refusal('waking', `Waking ${service}`, 2, undefined, sleepReasonTexts.idle);
    for (;;) {
      const state = current.services.get(service);
      if (!state) throw new Refusal('nothingServed');
      if (!state.running || state.status === 'stopped') throw new Refusal('serviceStopped', state.detail);
      if (state.status === 'sleeping' && !woken) {
        woken = true;
        await this.options.services.wake(current.row.id, service);
        this.routes.invalidate(current.row.id);
        deadline = Math.min(deadline, Date.now() + holdFor(hold));
        current = (await this.routes.get(current.row.id)) ?? current;
        looked = true;
        continue;
      }
      if (state.ready.length > 0) {
        this.options.services.noteRequest(current.row.id, service);
        const key = `${current.row.id}/${service}`;
        const turn = ((this.turn.get(key) ?? -1) + 1) % state.ready.length;
        this.turn.set(key, turn);
        return { host: state.ready[turn] };
      }
      if (!['starting', 'pending', 'sleeping'].includes(state.status)) throw new Refusal('noAnswer', state.detail ?? `${service} is ${state.status}`);
      const left = deadline - Date.now();
      if (left <= 0 && looked && woken) throw waking;
      if (left <= 0 && looked) throw new Refusal('noAnswer', `${service} did not become ready in time`);
      if (left > 0) await this.routes.changed(current.row.id, Math.min(left, HELD_POLL_MS));
      current = (await this.routes.get(current.row.id, HELD_POLL_MS)) ?? current;
      looked = true;
    }
  }
}
