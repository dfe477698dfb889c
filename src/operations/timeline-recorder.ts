// Keeps an operation's timeline in the database while it runs: every change of its PhaseTimeline (a phase begun or
// ended, a service's step beside it) is saved, one save at a time and the latest state only, each announced as
// operation.updated so that those following the operation (the console) read the timeline again.
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import type { PhaseTimeline } from '../core/phases.ts';
import { publishEvent } from '../events/publish.ts';
import { withTransaction } from '../store/database.ts';
import { findOperation } from '../store/operations.ts';
import { saveOperationTimeline } from '../store/operation-timelines.ts';
import { storedTimelineOf } from './timeline-view.ts';
import { operationView } from './view.ts';

export interface TimelineRecorder {
  /** Resolves once the timeline as it is now is saved. */
  flush(): Promise<void>;
}

/**
 * Saves `timeline` under the operation from its first change on (an operation whose handler never touches it keeps
 * none), until it stops changing: steps beside the line may end after the operation did.
 */
export function recordTimeline(deps: { pool: pg.Pool; clock: Clock; log: (message: string) => void }, operationId: string, timeline: PhaseTimeline): TimelineRecorder {
  let saving: Promise<void> | undefined;
  let again = false;
  let touched = false;
  let gone = false;
  const save = async (): Promise<void> => {
    do {
      again = false;
      const stored = storedTimelineOf(timeline);
      try {
        await withTransaction(deps.pool, async (db) => {
          if (!(await saveOperationTimeline(db, operationId, stored, deps.clock.now()))) return void (gone = true);
          const row = await findOperation(db, operationId);
          if (row) await publishEvent(db, { type: 'operation.updated', at: deps.clock.now().toISOString(), team_id: row.team_id ?? undefined, operation: operationView(row) });
        });
      } catch (error) {
        deps.log(`operations: saving the timeline of ${operationId} failed: ${(error as Error).message}`);
      }
    } while (again && !gone);
  };
  const schedule = (): Promise<void> => {
    if (gone) return Promise.resolve();
    if (saving) {
      again = true;
      return saving;
    }
    saving = save().finally(() => (saving = undefined));
    return saving;
  };
  timeline.onChange(() => {
    // the queue's phase alone (an operation that records nothing, now finished) is not worth a timeline
    if (!touched && timeline.steps.length <= 1 && timeline.running?.name === undefined) return;
    touched = true;
    void schedule();
  });
  return {
    async flush() {
      if (!touched) return;
      await saving;
      await schedule();
    },
  };
}
