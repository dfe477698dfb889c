// Pods outlive their server by design: a test stops the workspaces it made and removes their volumes.
import type { RuntimeDriver } from '../../src/runtime/driver.ts';

export async function removeWorkspaces(driver: RuntimeDriver, ids: Array<number | undefined>): Promise<void> {
  for (const id of ids) {
    if (!id) continue;
    await driver.stopWorkspace({ id, uid: 0, storageGib: 0 });
    await driver.deleteVolume({ id, uid: 0, storageGib: 0 });
  }
}
