// The `loop` volume backend (docs/runtime.md, "Volume size"): each workspace's volume is an ext4 file system in a
// sparse image file of the volume's size, loop-mounted at the volume's directory, so a write past `storage_gib`
// fails with ENOSPC inside the workspace instead of filling the host's disk. The directory backend only measures.
import { access, chmod, mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { runCommand } from './processes.ts';

export type VolumeBackend = 'directory' | 'loop';

/** What the loop backend needs of its host: where volumes and their images live. */
export interface VolumeImageHost {
  dataDir: string;
}

const GIB = 2 ** 30;

export function volumeImagesDir(host: VolumeImageHost): string {
  return path.join(host.dataDir, 'volume-images');
}

export function volumeImageFile(host: VolumeImageHost, id: number): string {
  return path.join(volumeImagesDir(host), `${id}.ext4`);
}

/** `auto` (the setting's default): `loop` where it can work, else `directory` and the reason. */
export async function resolveVolumeBackend(wanted: VolumeBackend | 'auto', asRoot: boolean): Promise<{ backend: VolumeBackend; reason?: string }> {
  if (wanted === 'directory') return { backend: 'directory', reason: 'the volume backend is set to directory' };
  const reason = await loopUnavailable(asRoot);
  if (!reason) return { backend: 'loop' };
  if (wanted === 'loop') throw new Error(`the loop volume backend cannot work here: ${reason}`);
  return { backend: 'directory', reason };
}

/**
 * Why the loop backend cannot work on this machine, or undefined when it can: it needs root (mount), the loop
 * driver (/dev/loop-control) and e2fsprogs (mkfs.ext4, resize2fs).
 */
export async function loopUnavailable(asRoot: boolean): Promise<string | undefined> {
  if (!asRoot) return 'the server does not run as root (mounting needs it)';
  if (!(await access('/dev/loop-control').then(() => true, () => false))) return 'the machine has no loop devices (/dev/loop-control; modprobe loop)';
  for (const tool of ['mkfs.ext4', 'resize2fs', 'losetup', 'mount', 'umount']) {
    if ((await runCommand('sh', ['-c', `command -v ${tool}`])).code !== 0) return `${tool} is not installed (apt-get install e2fsprogs mount)`;
  }
  return undefined;
}

/** The mount points of this mount namespace (octal escapes of /proc/self/mountinfo decoded). */
async function mountPoints(): Promise<Set<string>> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const decode = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  return new Set(text.split('\n').filter(Boolean).map((line) => decode(line.split(' ')[4])));
}

export async function isMounted(dir: string): Promise<boolean> {
  return (await mountPoints()).has(path.resolve(dir));
}

async function must(file: string, args: string[], what: string): Promise<string> {
  const result = await runCommand(file, args, { timeoutMs: 120_000 });
  if (result.code !== 0) throw new Error(`${what}: ${(result.stderr || result.stdout).trim() || `exit code ${result.code}`}`);
  return result.stdout;
}

/**
 * Makes the volume's image (once, at `sizeGib`), grows it when the size grew, and mounts it at `dir` (idempotent:
 * a server restart, or a kill -9 after the image was made but before it was mounted, lands here again). A size of
 * 0 mounts what is there. `log` hears of a growth that must wait for the next mount.
 */
export async function mountVolumeImage(host: VolumeImageHost, id: number, dir: string, sizeGib: number, log: (message: string) => void = () => undefined): Promise<void> {
  await mkdir(volumeImagesDir(host), { recursive: true, mode: 0o700 });
  await chmod(volumeImagesDir(host), 0o700);
  const image = volumeImageFile(host, id);
  // A partial image (killed between the truncate and mkfs) has no file system yet: made again from scratch.
  const formatted = (await runCommand('dumpe2fs', ['-h', image])).code === 0;
  if (!formatted) {
    if (!(sizeGib >= 1)) throw new Error(`the volume of workspace ${id} has no size (${sizeGib} GiB)`);
    await makeImage(image, sizeGib);
  }
  await mkdir(dir, { recursive: true });
  if ((await stat(image)).size < sizeGib * GIB) {
    // Mounted anywhere (the host, or a pod's namespace that outlived the host's mount), the image has a loop device.
    const device = (await loopDevicesOf(image))[0];
    if (!device) await growImage(image, sizeGib);
    else await growMountedImage(image, device, sizeGib).catch((error: Error) => log(`the volume of workspace ${id} keeps its size until no pod holds it: ${error.message}`));
  }
  if (await isMounted(dir)) return;
  await must('mount', ['-t', 'ext4', '-o', 'loop,nodev,nosuid', image, dir], `mounting the volume of workspace ${id}`);
  if (!formatted) await rm(path.join(dir, 'lost+found'), { recursive: true, force: true }); // /data/app starts empty
}

async function makeImage(image: string, sizeGib: number): Promise<void> {
  await resizeFile(image, sizeGib); // sparse: the host's disk holds only what the workspace writes
  // no blocks reserved for root (pods run with group 0, which ext4 would let use them); lazy init keeps mkfs quick
  await must('mkfs.ext4', ['-q', '-F', '-m', '0', '-E', 'lazy_itable_init=1,lazy_journal_init=1', image], 'making the volume file system');
}

async function resizeFile(image: string, sizeGib: number): Promise<void> {
  const file = await open(image, 'a', 0o600);
  try {
    await file.truncate(sizeGib * GIB);
  } finally {
    await file.close();
  }
}

/** The loop devices backed by `image` (mounts with `-o loop` detach theirs when the last one goes). */
async function loopDevicesOf(image: string): Promise<string[]> {
  const listed = await must('losetup', ['--noheadings', '--output', 'NAME', '--associated', image], 'listing the volume loop devices');
  return listed.split('\n').map((line) => line.trim()).filter(Boolean);
}

/** Growth of an image no one mounts: the file, a check (resize2fs wants one), then the file system. */
async function growImage(image: string, sizeGib: number): Promise<void> {
  const check = await runCommand('e2fsck', ['-f', '-p', image], { timeoutMs: 600_000 });
  if (check.code !== 0 && check.code !== 1) throw new Error(`checking the volume file system before it grows: ${check.stdout.trim()} ${check.stderr.trim()}`);
  await resizeFile(image, sizeGib);
  await must('resize2fs', [image], 'growing the volume file system');
}

/**
 * Online growth: the image file, its loop device's size, then the file system. The kernel asks for CAP_SYS_RESOURCE
 * (absent in some containers): then the file is put back and the volume grows at a mount when no pod holds it.
 */
async function growMountedImage(image: string, device: string, sizeGib: number): Promise<void> {
  const before = (await stat(image)).size;
  await resizeFile(image, sizeGib);
  try {
    await must('losetup', ['--set-capacity', device], 'growing the volume loop device');
    await must('resize2fs', [device], 'growing the volume file system');
  } catch (error) {
    const file = await open(image, 'r+');
    await file.truncate(before).finally(() => file.close());
    await runCommand('losetup', ['--set-capacity', device]);
    throw error;
  }
}

/** Unmounts the volume (lazily when something on the host still uses it) and removes its image. Idempotent. */
export async function removeVolumeImage(host: VolumeImageHost, id: number, dir: string): Promise<void> {
  await unmountVolume(id, dir);
  await rm(volumeImageFile(host, id), { force: true });
}

export async function unmountVolume(id: number, dir: string): Promise<void> {
  if (!(await isMounted(dir))) return;
  const plain = await runCommand('umount', [dir]);
  if (plain.code !== 0) await must('umount', ['--lazy', dir], `unmounting the volume of workspace ${id}`);
}

/**
 * At the driver's start: mounts every volume image that is not mounted (after a reboot; a kill -9 of the server
 * leaves the mounts, which belong to the kernel). An image exists only while its volume does (archive and delete
 * remove it).
 */
export async function remountVolumeImages(host: VolumeImageHost, dirOf: (id: number) => string, log: (message: string) => void): Promise<void> {
  const names = await readdir(volumeImagesDir(host)).catch(() => [] as string[]);
  for (const name of names) {
    const match = /^(\d+)\.ext4$/.exec(name);
    if (!match) continue;
    const id = Number(match[1]);
    const dir = dirOf(id);
    if (await isMounted(dir)) continue;
    await mountVolumeImage(host, id, dir, 0, log).catch((error: Error) => log(`the volume of workspace ${id} could not be mounted again: ${error.message}`));
  }
}
