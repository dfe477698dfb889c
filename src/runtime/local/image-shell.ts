// The shell a pod whose root is an image runs its steps, its editor command and its terminals with: the image's bash
// when it has one, else its /bin/sh. Paths are followed inside the image's root (an absolute link means the image's
// `/`, never the host's), so that what is found is what the pod will run.
import { lstat, readlink, stat } from 'node:fs/promises';
import path from 'node:path';

const SHELLS = ['/bin/bash', '/usr/bin/bash', '/bin/sh', '/usr/bin/sh'];
const MAX_LINKS = 40;

/** The first shell of the image that is an executable file, as the pod sees its path; undefined when it has none. */
export async function imageShell(rootfs: string): Promise<string | undefined> {
  for (const shell of SHELLS) {
    const resolved = await resolveInImage(rootfs, shell);
    if (!resolved) continue;
    const info = await stat(path.join(rootfs, resolved)).catch(() => undefined);
    if (info?.isFile() && (info.mode & 0o111) !== 0) return shell;
  }
  return undefined;
}

/** `podPath` with every symlink followed inside `rootfs`; undefined when a part is missing or links go round. */
export async function resolveInImage(rootfs: string, podPath: string, links = 0): Promise<string | undefined> {
  const parts = path.posix.normalize(podPath).split('/').filter(Boolean);
  let current = '/';
  for (let i = 0; i < parts.length; i++) {
    const next = path.posix.resolve(current, parts[i]);
    const info = await lstat(path.join(rootfs, next)).catch(() => undefined);
    if (!info) return undefined;
    if (info.isSymbolicLink()) {
      if (links >= MAX_LINKS) return undefined;
      const target = await readlink(path.join(rootfs, next));
      const rest = parts.slice(i + 1).join('/');
      return resolveInImage(rootfs, path.posix.resolve(current, target, rest), links + 1);
    }
    current = next;
  }
  return current;
}
