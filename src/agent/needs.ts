// Rule 1 of the service log: before its first step a replica waits for the services it needs (their health check,
// else their first port), each up to a deadline (5 minutes), in parallel. The probes and the clock are passed in.
import type { NeedAddress } from './replica-protocol.ts';
import { serviceLogTexts } from './service-log-texts.ts';

export interface NeedsDeps {
  nowMs: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Whether the needed service answers (health check, else port). */
  answers: (need: NeedAddress) => Promise<boolean>;
  /** Whether the needed service reports that it is failing. */
  isFailing: (need: NeedAddress) => Promise<boolean>;
  log: (text: string) => void;
  /** Stop waiting (the replica is being stopped). */
  cancelled?: () => boolean;
}

export type NeedOutcome = 'answered' | 'timed-out' | 'failing' | 'cancelled';

export async function waitForNeeds(needs: NeedAddress[], timeoutMs: number, intervalMs: number, deps: NeedsDeps): Promise<NeedOutcome[]> {
  return Promise.all(needs.map((need) => waitForNeed(need, timeoutMs, intervalMs, deps)));
}

async function waitForNeed(need: NeedAddress, timeoutMs: number, intervalMs: number, deps: NeedsDeps): Promise<NeedOutcome> {
  const deadline = deps.nowMs() + timeoutMs;
  deps.log(serviceLogTexts.needWaiting(need.name, timeoutMs));
  for (;;) {
    if (deps.cancelled?.()) return 'cancelled';
    if (await deps.answers(need)) {
      deps.log(serviceLogTexts.needAnswered(need.name));
      return 'answered';
    }
    if (await deps.isFailing(need)) {
      deps.log(serviceLogTexts.needFailing(need.name));
      return 'failing';
    }
    if (deps.nowMs() >= deadline) {
      deps.log(serviceLogTexts.needTimedOut(need.name, timeoutMs));
      return 'timed-out';
    }
    await deps.sleep(Math.min(intervalMs, Math.max(0, deadline - deps.nowMs())));
  }
}
