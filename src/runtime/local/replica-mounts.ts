// A replica's `mounts`: parts of its volume bound at other paths of its pod. The server opens each `from` and the
// sandbox binds the open descriptor (`--bind-fd`), so what it binds is what was checked: a path inside the volume,
// even when the workspace changes links in its volume at the same moment. A `from` that leads out of the volume
// (`..`, an absolute path, a link to elsewhere) is refused; a missing one is created as a directory.
import { constants } from 'node:fs';
import { open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { RuntimeFailure } from '../driver.ts';
import { isInside } from './sandbox.ts';

export interface OpenMount {
  handle: FileHandle;
  target: string;
}

/** Pod paths a mount may not cover: `inside` with everything below them, `exactly` themselves. */
export interface ReservedTargets {
  inside: string[];
  exactly: string[];
}

/** In a `steps` pod: the pod's own machinery, the host's system, the volume itself and /nix. */
export const stepsPodReserved: ReservedTargets = { inside: ['/proc', '/dev', '/opt/svc', '/run/svc', '/usr', '/etc', '/nix'], exactly: ['/', '/data', '/data/app', '/tmp'] };
/** In a container pod: the pod's own machinery and the files of /etc it provides; the image's paths are free. */
export const containerPodReserved: ReservedTargets = {
  inside: ['/proc', '/dev', '/sys', '/.svc', '/run/svc'],
  exactly: ['/', '/etc', '/etc/hosts', '/etc/passwd', '/etc/resolv.conf', '/tmp', '/run'],
};

/** In a `steps` pod from an image: a container pod's, and the volume and /nix. */
export const imageStepsPodReserved: ReservedTargets = {
  inside: [...containerPodReserved.inside, '/nix'],
  exactly: [...containerPodReserved.exactly, '/data', '/data/app'],
};

/**
 * Opens every mount's `from` below the volume's code (`volume.code`, its app/), never leading out of the volume
 * (`volume.root`: the workspace may have made app/ a link); `createDirectory` makes a missing one (as the workspace
 * UID). Throws RuntimeFailure('agent') with the reason for the first mount that cannot be bound; nothing stays open then.
 */
export async function openMounts(
  volumeDir: { root: string; code: string },
  mounts: Array<{ from: string; to: string }>,
  createDirectory: (from: string) => Promise<void>,
  reserved: ReservedTargets = stepsPodReserved,
): Promise<OpenMount[]> {
  const opened: OpenMount[] = [];
  try {
    const volume = await realpath(volumeDir.code);
    if (!isInside(await realpath(volumeDir.root), volume)) throw new RuntimeFailure('agent', 'the volume\'s app directory leads out of the volume');
    for (const mount of mounts) {
      const from = checkedSource(mount.from);
      const target = checkedTarget(mount.to, reserved);
      let handle = await openInside(volume, from);
      if (!handle) {
        await createDirectory(from);
        handle = await openInside(volume, from);
      }
      if (!handle) throw new RuntimeFailure('agent', `the mount source ${mount.from} could not be created in the volume`);
      opened.push({ handle, target });
    }
    return opened;
  } catch (error) {
    await closeMounts(opened);
    throw error;
  }
}

export async function closeMounts(mounts: OpenMount[]): Promise<void> {
  await Promise.all(mounts.map((mount) => mount.handle.close().catch(() => undefined)));
}

function checkedSource(from: string): string {
  const normal = path.posix.normalize(from);
  if (from.length === 0 || path.posix.isAbsolute(from) || normal === '..' || normal.startsWith('../') || from.includes('\0')) {
    throw new RuntimeFailure('agent', `the mount source ${from} is not a path inside the volume`);
  }
  return normal === '.' ? '' : normal.replace(/\/$/, '');
}

function checkedTarget(to: string, reserved: ReservedTargets): string {
  const normal = path.posix.normalize(to).replace(/(.)\/$/, '$1');
  if (!path.posix.isAbsolute(to) || to.includes('\0')) {
    throw new RuntimeFailure('agent', `the mount target ${to} is not an absolute path`);
  }
  if (reserved.exactly.includes(normal) || reserved.inside.some((dir) => isInside(dir, normal))) {
    throw new RuntimeFailure('agent', `the mount target ${to} is reserved in the pod`);
  }
  return normal;
}

/** The open source, undefined when it does not exist; refused when it resolves to a place outside the volume. */
async function openInside(volume: string, from: string): Promise<FileHandle | undefined> {
  const requested = path.join(volume, from);
  let handle: FileHandle;
  try {
    handle = await open(requested, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new RuntimeFailure('agent', `the mount source ${from} cannot be opened (${code})`);
  }
  const resolved = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => '');
  const info = await handle.stat();
  const problem = !isInside(volume, resolved) ? 'leads out of the volume' : info.isDirectory() || info.isFile() ? undefined : 'is neither a directory nor a file';
  if (problem) {
    await handle.close();
    throw new RuntimeFailure('agent', `the mount source ${from} ${problem}`);
  }
  return handle;
}
