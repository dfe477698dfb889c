/** The clock is passed in everywhere so tests can move time. */
export interface Clock {
  now(): Date;
  /** Milliseconds since the epoch, without allocating a Date (hot paths). */
  nowMs(): number;
}

export const systemClock: Clock = { now: () => new Date(), nowMs: () => Date.now() };

/** A clock for tests: starts at `start` and only moves when told. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date = new Date()) {
    this.current = start.getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  nowMs(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(at: Date): void {
    this.current = at.getTime();
  }
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
