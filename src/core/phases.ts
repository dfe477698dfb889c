// Where the time of a multi-step action goes (a wake: queue, claim, pod network, sandbox, agent, editor, ...): each
// phase ends at a mark, in wall-clock milliseconds, so that marks taken in another process of this machine (the agent
// in a pod reports when it listened and when its editor answered) fit on the same line. Read by the log and
// bench/workspaces; nothing decides on it.

/** Milliseconds since the epoch, with the precision of performance.now(). */
export const wallClockMs = (): number => performance.timeOrigin + performance.now();

export interface Phase {
  name: string;
  ms: number;
}

/**
 * A phase as people read it (an operation's timeline): when it began and ended (wall-clock ms; no end: still
 * running), what it did, and whether it ran beside the operation's own line of phases (a service's start during a
 * wake) rather than on it. The phases on the line follow one another and add up to the operation's time.
 */
export interface TimelineStep {
  name: string;
  startedAt: number;
  endedAt?: number;
  detail?: string;
  beside?: boolean;
  failed?: boolean;
}

/** A step beside the line, ended by whoever began it. */
export interface BesideStep {
  end(options?: { at?: number; detail?: string; failed?: boolean }): void;
}

export class PhaseTimeline {
  readonly phases: Phase[] = [];
  readonly steps: TimelineStep[] = [];
  private last: number;
  /** The phase under way on the line, when its name is known before its end (`begin`). */
  private current?: { name: string; detail?: string };
  private ended?: { at: number };
  private readonly listeners = new Set<() => void>();

  constructor(readonly startedAt: number = wallClockMs()) {
    this.last = startedAt;
  }

  /** Names the phase now under way on the line (shown as running until its `mark`), and what it does. */
  begin(name: string, detail?: string): void {
    if (this.ended) return;
    this.current = { name, detail };
    this.changed();
  }

  /**
   * Ends the phase `name` at `at` (now by default). A mark earlier than the last one (a clock read in another
   * process, a little behind) counts as 0 ms and does not move the timeline back. `detail`: what it did (else what
   * its `begin` said).
   */
  mark(name: string, at: number = wallClockMs(), detail?: string, failed?: boolean): void {
    if (this.ended) return;
    const startedAt = this.last;
    this.phases.push({ name, ms: Math.max(0, at - this.last) });
    this.last = Math.max(this.last, at);
    const said = detail ?? (this.current?.name === name ? this.current.detail : undefined);
    this.steps.push({ name, startedAt, endedAt: this.last, ...(said ? { detail: said } : {}), ...(failed ? { failed } : {}) });
    this.current = undefined;
    this.changed();
  }

  /** Begins a step beside the line (from `at`, now by default); it runs until its `end`. */
  beside(name: string, detail?: string, at: number = wallClockMs()): BesideStep {
    const step: TimelineStep = { name, startedAt: at, beside: true, ...(detail ? { detail } : {}) };
    this.steps.push(step);
    this.changed();
    return {
      end: (options = {}) => {
        if (step.endedAt !== undefined) return;
        step.endedAt = Math.max(step.startedAt, options.at ?? wallClockMs());
        if (options.detail) step.detail = options.detail;
        if (options.failed) step.failed = true;
        this.changed();
      },
    };
  }

  /**
   * The operation ended: a phase begun and not marked ends now (failed with the operation); nothing more joins the
   * line. Steps beside it may still end later (a service's first healthy answer after a Sync).
   */
  finish(failed: boolean, at: number = wallClockMs()): void {
    if (this.ended) return;
    if (this.current) this.mark(this.current.name, at, undefined, failed);
    else if (failed) this.mark('failed', at, undefined, true);
    this.ended = { at };
    this.changed();
  }

  /** What the line is doing now (none once finished): the begun phase's name, or none known yet. */
  get running(): { name?: string; startedAt: number; detail?: string } | undefined {
    if (this.ended) return undefined;
    return { name: this.current?.name, startedAt: this.last, detail: this.current?.detail };
  }

  /** When the operation ended (`finish`), on the wall clock. */
  get endedAt(): number | undefined {
    return this.ended?.at;
  }

  /** Calls `listener` after every change (a begin, a mark, a step beside). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  get totalMs(): number {
    return this.last - this.startedAt;
  }

  /** `812 ms: claim 4, pod network 38, ...` */
  text(): string {
    return `${Math.round(this.totalMs)} ms: ${this.phases.map((p) => `${p.name} ${Math.round(p.ms)}`).join(', ')}`;
  }
}

/**
 * An operation's timeline from the moment it was queued (when that is a moment of this machine's clock, at most
 * `maxAgeMs` ago, else from now), its first phase `queue and claim`.
 */
export function queuedTimeline(queuedAt: Date, maxAgeMs = 60_000): PhaseTimeline {
  const queued = queuedAt.getTime();
  const now = wallClockMs();
  const timeline = new PhaseTimeline(queued <= now && now - queued < maxAgeMs ? queued : now);
  timeline.mark('queue and claim', now);
  return timeline;
}

/** Phases back from `PhaseTimeline.text()` (bench/workspaces reads them from the server's log). */
export function parsePhases(text: string): Phase[] {
  const list = text.slice(text.indexOf(': ') + 2);
  return list.split(', ').flatMap((item) => {
    const match = /^(.+) (\d+)$/.exec(item.trim());
    return match ? [{ name: match[1], ms: Number(match[2]) }] : [];
  });
}
