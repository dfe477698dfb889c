// The live event stream (GET /api/v1/events, spec 6) for the whole console: one EventSource, reopened after a
// growing delay when it breaks. Every `ready` (the first one, and after each reconnect) tells every view to
// re-read what it shows; other events name what changed.
import { api } from './api.ts';
import type { SvcEvent } from './types.ts';

const EVENT_TYPES = [
  'ready',
  'workspace.created',
  'workspace.updated',
  'workspace.deleted',
  'workspace.restored',
  'workspace.purged',
  'operation.updated',
  'landscape.updated',
  'stage.updated',
  'managed_service.updated',
  'org.updated',
  'org.deleted',
  'team.created',
  'team.updated',
  'team.deleted',
  'members.updated',
  'invites.updated',
  'owner_transfers.updated',
  'access.changed',
  'domain.updated',
];

export type LinkState = 'connecting' | 'live' | 'reconnecting';
export type EventListener = (event: SvcEvent) => void;

export class EventHub {
  state: LinkState = 'connecting';
  private source?: EventSource;
  private timer?: ReturnType<typeof setTimeout>;
  private failures = 0;
  private readonly listeners = new Set<EventListener>();
  private readonly stateListeners = new Set<(state: LinkState) => void>();

  start(): void {
    if (!this.source && !this.timer) this.open();
  }

  stop(): void {
    this.source?.close();
    this.source = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
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

  private open(): void {
    this.timer = undefined;
    const source = new EventSource('/api/v1/events');
    this.source = source;
    const receive = (message: MessageEvent<string>) => {
      let event: SvcEvent;
      try {
        event = JSON.parse(message.data) as SvcEvent;
      } catch {
        return;
      }
      if (event.type === 'ready') {
        this.failures = 0;
        this.setState('live');
      }
      for (const listener of [...this.listeners]) listener(event);
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, receive as (e: Event) => void);
    source.onerror = () => {
      source.close();
      if (this.source !== source) return;
      this.source = undefined;
      this.setState('reconnecting');
      // A 401 here means the session ended: reading /me lets the console notice and show the sign-in page.
      void api('GET', '/me').catch(() => undefined);
      const delay = Math.min(30_000, 500 * 2 ** this.failures++);
      this.timer = setTimeout(() => this.open(), delay);
    };
  }

  private setState(state: LinkState): void {
    if (this.state === state) return;
    this.state = state;
    for (const listener of [...this.stateListeners]) listener(state);
  }
}

export const events = new EventHub();
