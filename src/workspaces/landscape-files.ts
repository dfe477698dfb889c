// Tells clients when the landscape file of a running workspace changed: the editor pod's agent watches svc.yml
// and the profile files and reports a fingerprint of them; when it moves, landscape.updated goes out and the
// landscape page re-reads GET /workspaces/{ws}/landscape, whose banner compares the file with the last Sync.
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import { publishEvent } from '../events/publish.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { runningWorkspaces } from '../store/workspaces.ts';

export interface LandscapeFileWatchDeps {
  pool: pg.Pool;
  driver: Pick<RuntimeDriver, 'landscapeFilesFingerprint'>;
  clock: Clock;
  log: (message: string) => void;
  /** Whether this server watches now: one server of the installation does (the lowest live slot), else each sends the event. */
  watches?: () => Promise<boolean>;
}

export class LandscapeFileWatch {
  /**
   * The last fingerprint seen per running workspace. The first one read is announced too: the file may have
   * changed while this server did not watch (it restarted, the workspace slept), and a refetch costs little.
   */
  private readonly seen = new Map<number, string>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly deps: LandscapeFileWatchDeps) {}

  /** Asks every running workspace's agent once; sends landscape.updated for each whose files changed. */
  async watchOnce(): Promise<void> {
    if (this.deps.watches && !(await this.deps.watches())) return this.seen.clear(); // another server watches
    const rows = await runningWorkspaces(this.deps.pool);
    const running = new Set(rows.map((row) => row.id));
    for (const id of this.seen.keys()) if (!running.has(id)) this.seen.delete(id);
    await Promise.all(
      rows.map(async (row) => {
        const now = await this.deps.driver.landscapeFilesFingerprint({ id: row.id, teamId: row.team_id, uid: row.uid, storageGib: row.storage_gib });
        const known = this.seen.get(row.id);
        if (now === undefined) return; // no agent answers now (starting, or one that predates the watch)
        this.seen.set(row.id, now);
        if (known === now) return;
        await publishEvent(this.deps.pool, { type: 'landscape.updated', at: this.deps.clock.now().toISOString(), team_id: row.team_id, workspace_id: row.id });
      }),
    );
  }

  /** Asks again `intervalMs` after each round ends (a slow agent never makes rounds overlap). */
  start(intervalMs = 1000): void {
    const tick = async () => {
      try {
        await this.watchOnce();
      } catch (error) {
        this.deps.log(`landscape file watch: ${(error as Error).message}`);
      }
      if (this.closed) return;
      this.timer = setTimeout(() => void tick(), intervalMs);
      this.timer.unref();
    };
    this.timer = setTimeout(() => void tick(), intervalMs);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
