// One side of bench/events (svc or the reference): the latencies of its rounds, their phases from the server's trace
// (commit → server has it → last write → last client), and the scheduler's figures of its main thread and of the
// kernel's softirq threads over the rounds, from /proc.
import { addSched, mainThreadSched, noSched, softirqSched, type ThreadSched } from './process-stats.ts';

export interface RoundTimes {
  times: number[];
  /** The longest a client process's event loop was busy since its previous report. */
  busyMs: number;
}

/** `events-trace <first notification ms> <last write ms> <writes>`: a server's batch, when SVC_EVENTS_TRACE=1. */
function traces(output: string): Array<{ received: number; written: number; writes: number }> {
  return [...output.matchAll(/^events-trace (\S+) (\S+) (\d+)/gm)].map((m) => ({ received: Number(m[1]), written: Number(m[2]), writes: Number(m[3]) }));
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

export const ms = (value: number) => `${value.toFixed(2)} ms`;

/** What one side (svc or the reference) showed over the rounds. */
export class Side {
  readonly latencies: number[] = [];
  readonly toServer: number[] = [];
  readonly serverWork: number[] = [];
  readonly lastWriteToLastReceipt: number[] = [];
  readonly clientBusy: number[] = [];
  readonly commits: number[] = [];
  readonly lastReceipts: number[] = [];
  readonly firstReceipts: number[] = [];
  /** Summed over the rounds: the server's main thread, and the kernel's softirq threads (receive work deferred to them). */
  server: ThreadSched = noSched;
  softirq: ThreadSched = noSched;
  /** Per round, for BENCH_EVENTS_DETAIL: ms after the commit of server receipt, last write, first and last client. */
  readonly detail: string[] = [];

  add(committing: number, round: RoundTimes): void {
    for (const at of round.times) this.latencies.push(at - committing);
    this.commits.push(committing);
    this.lastReceipts.push(Math.max(...round.times));
    this.firstReceipts.push(Math.min(...round.times));
    this.clientBusy.push(round.busyMs);
  }

  /** Matches the server's batches to the rounds: the first batch received after each commit. */
  phases(output: string): void {
    const batches = traces(output).filter((b) => b.writes > 0);
    this.commits.forEach((commit, i) => {
      const batch = batches.find((b) => b.received >= commit && b.received <= this.lastReceipts[i]);
      if (!batch) return;
      this.toServer.push(batch.received - commit);
      this.serverWork.push(batch.written - batch.received);
      this.lastWriteToLastReceipt.push(this.lastReceipts[i] - batch.written);
      const after = (t: number) => (t - commit).toFixed(1);
      this.detail.push(`server ${after(batch.received)} last write ${after(batch.written)} clients ${after(this.firstReceipts[i])}..${after(this.lastReceipts[i])}`);
    });
  }

  line(name: string): string {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return `  ${name.padEnd(10)} p50 ${ms(percentile(sorted, 50))}   p99 ${ms(percentile(sorted, 99))}   max ${ms(sorted.at(-1)!)}`;
  }

  phaseLine(): string {
    if (this.toServer.length === 0) return '             (no server trace)';
    const median = (values: number[]) => ms(percentile([...values].sort((a, b) => a - b), 50));
    const p99 = (values: number[]) => ms(percentile([...values].sort((a, b) => a - b), 99));
    return `             commit → server has it ${median(this.toServer)} (p99 ${p99(this.toServer)}); → last write ${median(this.serverWork)} (p99 ${p99(this.serverWork)}); ` +
      `→ last client ${median(this.lastWriteToLastReceipt)} (p99 ${p99(this.lastWriteToLastReceipt)}); client process busy ${median(this.clientBusy)} per round`;
  }

  /** Takes the scheduler's figures before a round and adds what the round changed once `round` resolves. */
  async scheduled<T>(pid: number, softirqDirs: readonly string[], round: () => Promise<T>): Promise<T> {
    const [server, softirq] = await Promise.all([mainThreadSched(pid), softirqSched(softirqDirs)]);
    const result = await round();
    const [serverAfter, softirqAfter] = await Promise.all([mainThreadSched(pid), softirqSched(softirqDirs)]);
    this.server = addSched(this.server, addSched(serverAfter, server, -1));
    this.softirq = addSched(this.softirq, addSched(softirqAfter, softirq, -1));
    return result;
  }

  schedLine(rounds: number): string {
    const per = (value: number) => (value / rounds).toFixed(1);
    return `             per event: main thread on the CPU ${per(this.server.runMs)} ms, waiting for it ${per(this.server.waitMs)} ms, taken off it ${per(this.server.involuntarySwitches)} times; ` +
      `ksoftirqd ran ${per(this.softirq.runs)} times, ${per(this.softirq.runMs)} ms, after waiting ${per(this.softirq.waitMs)} ms`;
  }

  get p50(): number {
    return percentile([...this.latencies].sort((a, b) => a - b), 50);
  }
  get p99(): number {
    return percentile([...this.latencies].sort((a, b) => a - b), 99);
  }
}
