// Re-owning a workspace's files for a new UID (spec 4.7), as root on this machine: every entry of the tree goes to
// the UID with group 0, group permissions equal to the user's, setgid on directories. Symbolic links are re-owned
// themselves and never followed (a link in a volume may point anywhere on the host). The workspace's processes are
// stopped meanwhile, so nothing in the tree moves under the walk. Safe to run again: it sets, it does not toggle.
import type { Dirent } from 'node:fs';
import { chmod, lchown, lstat, opendir } from 'node:fs/promises';
import path from 'node:path';

export interface UnchangedEntry {
  /** The entry as the workspace sees it (`/data/app/...`, `/nix/...`). */
  path: string;
  reason: string;
}

/** How many entries that could not be changed are named (the rest are counted). */
const NAMED_FAILURES = 10;

export interface ReownResult {
  entries: number;
  unchanged: UnchangedEntry[];
  /** Entries that could not be changed beyond the named ones. */
  moreUnchanged: number;
}

/**
 * The mode a re-owned entry gets: group bits equal to the user's, setgid on directories, no setuid or setgid on
 * files (as chown itself drops them, and as images' files get them dropped: docs/images.md); other bits kept.
 */
export function reownedMode(mode: number, isDirectory: boolean): number {
  const user = (mode >> 6) & 0o7;
  const withGroup = (mode & 0o7707) | (user << 3);
  return isDirectory ? withGroup | 0o2000 : withGroup & ~0o6000;
}

/**
 * How the tree is re-owned. A volume's entries all go to the UID with the group permissions of the user (the
 * default); a managed instance's data keeps its modes (`keepModes`: PostgreSQL refuses a group-writable data
 * directory) and its root-owned files (`skipRootOwned`: its log and process record stay the server's).
 */
export interface ReownRule {
  keepModes?: boolean;
  skipRootOwned?: boolean;
}

/** Re-owns `root` and everything under it; `shownAs` is the path the workspace knows `root` by. */
export async function reownTree(root: string, shownAs: string, uid: number, signal?: AbortSignal, rule: ReownRule = {}): Promise<ReownResult> {
  const result: ReownResult = { entries: 0, unchanged: [], moreUnchanged: 0 };
  const failed = (file: string, error: unknown) => {
    const entry = { path: path.posix.join(shownAs, path.relative(root, file).split(path.sep).join('/')), reason: reasonOf(error) };
    if (result.unchanged.length < NAMED_FAILURES) result.unchanged.push(entry);
    else result.moreUnchanged++;
  };
  const pending = [root];
  while (pending.length > 0) {
    signal?.throwIfAborted();
    const dir = pending.pop()!;
    if (!(await reownEntry(dir, uid, failed, rule))) continue;
    result.entries++;
    let entries: Dirent[];
    try {
      entries = [];
      for await (const entry of await opendir(dir)) entries.push(entry);
    } catch (error) {
      failed(dir, error);
      continue;
    }
    for (const entry of entries) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(file);
      else if (await reownEntry(file, uid, failed, rule)) result.entries++;
    }
  }
  return result;
}

/** One entry: owner first, then mode (chown clears setgid on files); false when it could not be changed. */
async function reownEntry(file: string, uid: number, failed: (file: string, error: unknown) => void, rule: ReownRule): Promise<boolean> {
  try {
    const before = await lstat(file);
    if (rule.skipRootOwned && before.uid === 0) return true;
    if (before.uid !== uid || before.gid !== 0) await lchown(file, uid, 0);
    if (before.isSymbolicLink() || rule.keepModes) return true;
    const mode = before.mode & 0o7777;
    const wanted = reownedMode(mode, before.isDirectory());
    // chown drops setuid and setgid bits of files; set the mode whenever the owner changed, or the bits differ.
    if (wanted !== mode || before.uid !== uid) await chmod(file, wanted);
    return true;
  } catch (error) {
    failed(file, error);
    return false;
  }
}

function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'EPERM') return 'operation not permitted (immutable or append-only file?)';
  if (code === 'EROFS') return 'read-only file system';
  if (code === 'EACCES') return 'permission denied';
  return (error as Error)?.message ?? String(error);
}
