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

export class PhaseTimeline {
  readonly phases: Phase[] = [];
  private last: number;

  constructor(readonly startedAt: number = wallClockMs()) {
    this.last = startedAt;
  }

  /**
   * Ends the phase `name` at `at` (now by default). A mark earlier than the last one (a clock read in another
   * process, a little behind) counts as 0 ms and does not move the timeline back.
   */
  mark(name: string, at: number = wallClockMs()): void {
    this.phases.push({ name, ms: Math.max(0, at - this.last) });
    this.last = Math.max(this.last, at);
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
 * An operation's timeline from the moment it was queued (when that is a moment of this machine's clock, else from
 * now), its first phase `queue and claim`.
 */
export function queuedTimeline(queuedAt: Date): PhaseTimeline {
  const queued = queuedAt.getTime();
  const now = wallClockMs();
  const timeline = new PhaseTimeline(queued <= now && now - queued < 60_000 ? queued : now);
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
