// The files the built-in editor shows and saves: everything under the workspace directory, nothing outside it.
import { lstat, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface TreeEntry {
  /** Relative to the workspace directory, with `/` separators. */
  path: string;
  type: 'file' | 'dir';
}

/** Directories the tree does not descend into (still listed). */
const unlisted = new Set(['.git', 'node_modules']);
export const MAX_TREE_ENTRIES = 5000;
export const MAX_FILE_BYTES = 2 * 1024 * 1024;

/** The absolute path of `relative` under `root`, or undefined when it would leave `root`. */
export function resolveInside(root: string, relative: string): string | undefined {
  if (relative.length === 0 || relative.includes('\0') || path.isAbsolute(relative)) return undefined;
  const resolved = path.resolve(root, relative);
  const fromRoot = path.relative(root, resolved);
  if (fromRoot === '' || fromRoot.startsWith('..') || path.isAbsolute(fromRoot)) return undefined;
  return resolved;
}

/** Directories first, then files, each by name; at most MAX_TREE_ENTRIES entries. */
export async function listTree(root: string, limit = MAX_TREE_ENTRIES): Promise<{ entries: TreeEntry[]; truncated: boolean }> {
  const entries: TreeEntry[] = [];
  const walk = async (dir: string, prefix: string): Promise<boolean> => {
    const children = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.isDirectory() === b.isDirectory() ? a.name.localeCompare(b.name) : a.isDirectory() ? -1 : 1,
    );
    for (const child of children) {
      if (entries.length >= limit) return false;
      const relative = prefix ? `${prefix}/${child.name}` : child.name;
      if (child.isDirectory()) {
        entries.push({ path: relative, type: 'dir' });
        if (!unlisted.has(child.name) && !(await walk(path.join(dir, child.name), relative))) return false;
      } else if (child.isFile()) {
        entries.push({ path: relative, type: 'file' });
      }
    }
    return true;
  };
  const complete = await walk(root, '');
  return { entries, truncated: !complete };
}

export type FileRead = { ok: true; text: string } | { ok: false; status: 400 | 404 | 413; message: string };

export async function readWorkspaceFile(root: string, relative: string): Promise<FileRead> {
  const file = resolveInside(root, relative);
  if (!file) return { ok: false, status: 400, message: 'The path is outside the workspace.' };
  const info = await lstat(file).catch(() => undefined);
  if (!info?.isFile()) return { ok: false, status: 404, message: 'No such file.' };
  if (info.size > MAX_FILE_BYTES) return { ok: false, status: 413, message: 'The file is too large to edit here.' };
  return { ok: true, text: await readFile(file, 'utf8') };
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
export async function writeWorkspaceFile(root: string, relative: string, text: string): Promise<{ ok: true } | { ok: false; message: string }> {
  const file = resolveInside(root, relative);
  if (!file) return { ok: false, message: 'The path is outside the workspace.' };
  const existing = await lstat(file).catch(() => undefined);
  if (existing && !existing.isFile()) return { ok: false, message: 'The path is not a regular file.' };
  await mkdir(path.dirname(file), { recursive: true });
  const partial = path.join(path.dirname(file), `.${path.basename(file)}.saving-${process.pid}`);
  await writeFile(partial, text, { mode: existing ? existing.mode & 0o7777 : 0o664 });
  await rename(partial, file);
  return { ok: true };
}
