// The live event stream (GET /api/v1/events, spec 6) for the whole console, read by the SDK's reader, which opens
// it again after a growing delay when it breaks. Every `ready` (the first one, and after each reconnect) tells every
// view to re-read what it shows; other events name what changed.
import { svcEvents } from '../../sdk/src/index.ts';
import { answer, svcApi, svcOptions } from './api.ts';
import type { SvcEvent } from './types.ts';

export type LinkState = 'connecting' | 'live' | 'reconnecting';
export type EventListener = (event: SvcEvent) => void;

export class EventHub {
  state: LinkState = 'connecting';
  private reading?: AbortController;
  private readonly listeners = new Set<EventListener>();
  private readonly stateListeners = new Set<(state: LinkState) => void>();

  start(): void {
    if (!this.reading) void this.read((this.reading = new AbortController()));
  }

  stop(): void {
    this.reading?.abort();
    this.reading = undefined;
    this.setState('connecting');
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onState(listener: (state: LinkState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  private async read(reading: AbortController): Promise<void> {
    const onReconnect = () => {
      this.setState('reconnecting');
      // A 401 here means the session ended: reading /me lets the console notice and show the sign-in page.
      void answer(svcApi.GET('/api/v1/me')).catch(() => undefined);
    };
    const retryDelay = (failures: number) => Math.min(30_000, 500 * 2 ** (failures - 1));
    try {
      for await (const event of svcEvents(svcOptions, { signal: reading.signal, retryDelay, onReconnect })) {
        if (event.type === 'ready') this.setState('live');
        for (const listener of [...this.listeners]) listener(event);
      }
    } catch {
      // A refusal no retry changes (the session ended, 501): the sign-in page or a console without live updates.
      onReconnect();
    }
    if (this.reading === reading) this.reading = undefined;
  }

  private setState(state: LinkState): void {
    if (this.state === state) return;
    this.state = state;
    for (const listener of [...this.stateListeners]) listener(state);
  }
}

export const events = new EventHub();
