// A request the router answers with one of its pages (pages.ts) instead of an upstream's answer.
import type { RouterPageName } from './pages.ts';

export class Refusal {
  constructor(
    readonly page: RouterPageName,
    readonly detail?: string,
    readonly retryAfterSeconds?: number,
    readonly signInUrl?: string,
    /** Why what is being woken slept (waiting pages name it). */
    readonly sleepReason?: string,
  ) {}
}
