// Bounds on a registry's transfers (issue 33): a registry that sends nothing, or a byte now and then, must not hold
// a pull (and the operation waiting for it) for ever. Each request is watched for progress: fewer than STALL_BYTES
// within `stallMs` (from the request, its answer, or the last time that many arrived) cuts it off as `stalled`; a
// pull as a whole ends at `pullTimeoutMs` (`timed-out`), however its bytes trickle.

export interface TransferBounds {
  /** Milliseconds a request may go with fewer than STALL_BYTES arriving (`--registry-stall-timeout`). */
  stallMs: number;
  /** Milliseconds a pull may take in all, manifests, config and layers (`--registry-pull-timeout`). */
  pullTimeoutMs: number;
}

export const DEFAULT_STALL_SECONDS = 60;
export const DEFAULT_PULL_TIMEOUT_SECONDS = 1800;
export const defaultTransferBounds: TransferBounds = { stallMs: DEFAULT_STALL_SECONDS * 1000, pullTimeoutMs: DEFAULT_PULL_TIMEOUT_SECONDS * 1000 };

/** Less than this within the stall timeout is no progress: a byte every few seconds keeps nothing alive. */
export const STALL_BYTES = 1024;

/** Calls `stalled(bytes)` once when fewer than STALL_BYTES arrived within `stallMs` of the start or the last mark. */
export class StallWatch {
  private bytes = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly stallMs: number,
    private readonly stalled: (bytes: number) => void,
  ) {
    this.arm();
  }

  /** The registry answered (its headers): a sign of life. */
  answered(): void {
    this.arm();
  }

  progress(bytes: number): void {
    if (!this.timer) return;
    this.bytes += bytes;
    if (this.bytes >= STALL_BYTES) this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.bytes = 0;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.stalled(this.bytes);
    }, this.stallMs);
    this.timer.unref();
  }
}

export const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/** What a stalled request's failure says: `the registry sent nothing for 60 s while sending the blob sha256:…`. */
export function stalledDetail(bytes: number, stallMs: number, what: string): string {
  const sent = bytes === 0 ? `sent nothing for ${seconds(stallMs)}` : `sent only ${bytes} byte${bytes === 1 ? '' : 's'} in ${seconds(stallMs)}`;
  return `the registry ${sent} while sending the ${what} (--registry-stall-timeout)`;
}

export function timedOutDetail(pullTimeoutMs: number): string {
  return `the pull did not finish within ${seconds(pullTimeoutMs)} (--registry-pull-timeout)`;
}
