// Checking landscape files off the event loop: a few worker threads and a queue. Reading a large or crafted
// svc.yml (tens of thousands of errors, an alias bomb) takes seconds of CPU; in a worker it delays only the plan
// that asked, and a check over its time budget is stopped (the worker is ended) and reported as too complex.
// Checks wait per caller (check-queue.ts): one member's heavy files delay their own checks, not another team's.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { problem } from '../core/problems.ts';
import type { InstallationPlans } from '../capacity/plans.ts';
import type { LandscapeCheck, LandscapeCheckRequest } from './landscape-check.ts';
import { CheckQueue, checkQueueLimits, type CheckCaller } from './check-queue.ts';

export interface LandscapeCheckerOptions {
  /** Milliseconds one file may take to check before its worker is ended. */
  budgetMs: number;
  /** Worker threads at most; default: 2, or 1 on a one-core machine. */
  workers?: number;
  /** Checks that may wait for a worker; more are refused with 503. */
  maxWaiting?: number;
  /** Checks one user may have running and waiting; more are refused with 429 (a team: twice as many). Default 8. */
  perUser?: number;
  /** Provider versions the operator disabled (`provider:version`), sent with every check. */
  managedDisabled?: readonly string[];
  /** The installation's plans, sent with every check (service plans of the file are checked against them). */
  plans?: InstallationPlans;
}

interface Job {
  request: LandscapeCheckRequest;
  resolve: (check: LandscapeCheck) => void;
  reject: (error: Error) => void;
}

type WorkerAnswer = { ready: true } | { result: LandscapeCheck } | { error: string };

// The worker runs the TypeScript sources like the server does, whichever way the server was started (tsx's
// command, bin/svc.js registering tsx in-process, node --import tsx): it registers tsx itself, then imports its
// entry. Node 20 gives a worker neither the parent's loader hooks nor working `--import` hooks for its entry.
const workerBootstrap = [
  `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})`,
  `.then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('./landscape-check-worker.ts', import.meta.url).href)}); });`,
].join('');
/** A check that needs more heap than this is too complex too (aliases are bounded, but a file is up to 4 MiB). */
const workerHeapMb = 512;

export class LandscapeChecker {
  private readonly size: number;
  private readonly maxWaiting: number;
  private readonly idle: Worker[] = [];
  private readonly busy = new Set<Worker>();
  private readonly starting = new Set<Worker>();
  private readonly queue: CheckQueue<Job>;
  private closed = false;

  constructor(private readonly options: LandscapeCheckerOptions) {
    this.size = Math.max(1, options.workers ?? Math.min(2, os.availableParallelism()));
    this.maxWaiting = options.maxWaiting ?? 64;
    this.queue = new CheckQueue(checkQueueLimits(this.size, options.perUser));
  }

  /**
   * Checks a file's text in a worker, in `caller`'s turn. 429 when the caller already has its share of checks
   * running and waiting; 503 when the server as a whole has too many waiting.
   */
  check(caller: CheckCaller, request: LandscapeCheckRequest): Promise<LandscapeCheck> {
    if (this.closed) return Promise.reject(problem('unavailable', 503, 'The server is stopping.'));
    if (this.queue.waiting >= this.maxWaiting) {
      return Promise.reject(problem('unavailable', 503, 'Too many landscape files are being checked now; try again shortly.', { headers: { 'Retry-After': '5' } }));
    }
    return new Promise((resolve, reject) => {
      const job = { request: { ...request, managedDisabled: this.options.managedDisabled ?? [], plans: this.options.plans }, resolve, reject };
      const admission = this.queue.admit(caller, job);
      if (!admission.admitted) {
        // One of the caller's checks ends within the budget, which makes room for one more.
        const wait = Math.max(1, Math.ceil(this.options.budgetMs / 1000));
        const whose = admission.over === 'user' ? 'You have' : 'Your team has';
        reject(problem('rate-limited', 429, `${whose} too many landscape files being checked now; wait ${wait} s.`, { headers: { 'Retry-After': String(wait) } }));
        return;
      }
      this.dispatch();
    });
  }

  /**
   * Starts one worker ahead of the first check (loading its modules takes most of a second), so the first Plan after
   * the server starts does not wait for it; it then idles in the pool like any worker that finished a check.
   */
  warm(): void {
    if (this.closed || this.idle.length + this.busy.size + this.starting.size > 0) return;
    this.start();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.reject(problem('unavailable', 503, 'The server is stopping.'));
    const workers = [...this.idle.splice(0), ...this.busy, ...this.starting];
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private dispatch(): void {
    while (!this.closed) {
      const runnable = this.queue.runnable();
      if (runnable === 0) return;
      const worker = this.idle.pop();
      if (worker !== undefined) {
        const { caller, item } = this.queue.take()!;
        this.run(worker, item, caller);
        continue;
      }
      // One worker starting per check that may run now, within the pool's size.
      if (this.busy.size + this.starting.size >= this.size || this.starting.size >= runnable) return;
      this.start();
    }
  }

  /** Starts a worker; once its modules are loaded it takes the next waiting job (loading is not on the budget). */
  private start(): void {
    const worker = new Worker(workerBootstrap, { eval: true, execArgv: [], resourceLimits: { maxOldGenerationSizeMb: workerHeapMb } });
    this.starting.add(worker);
    const failed = (error: Error) => {
      this.end(worker);
      this.starting.delete(worker);
      // A worker that cannot even load fails the waiting checks rather than being restarted in a loop.
      for (const job of this.queue.drain()) job.reject(error);
    };
    listen(worker, {
      error: failed,
      exit: (code) => failed(new Error(`the landscape-check worker exited with ${code} while loading`)),
      message: (answer) => {
        this.starting.delete(worker);
        if (!('ready' in answer) || this.closed) {
          this.end(worker);
          return;
        }
        this.park(worker);
        this.dispatch();
      },
    });
  }

  private run(worker: Worker, job: Job, caller: CheckCaller): void {
    this.busy.add(worker);
    worker.ref();
    let settled = false;
    const settle = (outcome: { check?: LandscapeCheck; error?: Error }, keep: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      this.busy.delete(worker);
      this.queue.finished(caller);
      if (keep && !this.closed) this.park(worker);
      else this.end(worker);
      if (outcome.check) job.resolve(outcome.check);
      else job.reject(outcome.error!);
      this.dispatch();
    };
    const tooComplex = { state: 'too-complex', budgetMs: this.options.budgetMs } as const;
    const timer = setTimeout(() => settle({ check: tooComplex }, false), this.options.budgetMs);
    listen(worker, {
      message: (answer) => {
        if ('result' in answer) settle({ check: answer.result }, true);
        else if ('error' in answer) settle({ error: new Error(`checking a landscape file failed: ${answer.error}`) }, true);
      },
      error: (error) => settle((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? { check: tooComplex } : { error }, false),
      exit: (code) => settle({ error: new Error(`the landscape-check worker exited with ${code}`) }, false),
    });
    worker.postMessage(job.request);
  }

  /** An idle worker does not keep the process alive; should it end anyway, it leaves the pool. */
  private park(worker: Worker): void {
    worker.unref();
    const leave = () => {
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
    };
    listen(worker, { error: leave, exit: leave });
    this.idle.push(worker);
  }

  /** Ends a worker no longer wanted; an error while it ends must not become an uncaught one. */
  private end(worker: Worker): void {
    listen(worker, { error: () => undefined });
    void worker.terminate();
  }
}

interface WorkerListeners {
  message?: (answer: WorkerAnswer) => void;
  error?: (error: Error) => void;
  exit?: (code: number) => void;
}

const attached = new WeakMap<Worker, WorkerListeners>();

/** Replaces this module's listeners on `worker` (the Worker keeps listeners of its own, which must stay). */
function listen(worker: Worker, listeners: WorkerListeners): void {
  const before = attached.get(worker) ?? {};
  for (const [event, listener] of Object.entries(before)) worker.off(event, listener);
  for (const [event, listener] of Object.entries(listeners)) worker.on(event, listener);
  attached.set(worker, listeners);
}
