// A workspace over its disk quota (spec 7): its files exceed the volume's size. Sync and the prepare stage, which
// both may write much more, are refused until space is freed; one check, one problem type for both.
import { problem } from '../core/problems.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';

export type VolumeUsageOf = (row: WorkspaceRow) => Promise<{ bytes: number }>;

/** 409 `disk-over-quota` when the volume holds more than `storage_gib`; `action` completes "free space before ...". */
export async function refuseOverDiskQuota(usageOf: VolumeUsageOf, row: WorkspaceRow, action: string): Promise<void> {
  const { bytes } = await usageOf(row);
  if (bytes <= row.storage_gib * 2 ** 30) return;
  throw problem('disk-over-quota', 409, `The volume holds ${(bytes / 2 ** 30).toFixed(1)} GiB, over its ${row.storage_gib} GiB: free space (or raise its storage) before ${action}.`);
}
