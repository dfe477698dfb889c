// Reading the landscape file of a workspace's code. A driver-side component: the local driver reads the volume
// on this machine; a cluster driver would ask the workspace's agent.
import type { WorkspaceRef } from './driver.ts';

export type LandscapeFileRead =
  | { state: 'found'; text: string }
  | { state: 'missing' }
  /** Not readable as a landscape file: a directory, a link, too large (`limitBytes` set), not UTF-8. */
  | { state: 'unreadable'; reason: string; limitBytes?: number }
  /** The workspace has no volume now (archived, or not created yet). */
  | { state: 'no-volume' };

export interface WorkspaceFiles {
  /** Reads `fileName` (`svc.yml` or `svc.<profile>.yml`) at the root of /data/app. */
  readLandscapeFile(workspace: WorkspaceRef, fileName: string): Promise<LandscapeFileRead>;
}

/** svc.yml files are small; a bigger file is refused before it is read. */
export const LANDSCAPE_FILE_LIMIT = 4 * 1024 * 1024;
