// Container images for tests without a registry: a root filesystem made of busybox-static (Debian package
// `busybox-static`, scripts/setup.sh) with its applets as links, and an OCI image config beside it, as the image store
// answers them (src/runtime/image.ts). Every file is readable by anyone, as the store's unpacked layers are.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ImageConfig, ImageLookup, ImageRequest, ImageSource, PreparedImage } from '../../src/runtime/image.ts';

const run = promisify(execFile);
export const BUSYBOX = '/bin/busybox';
const APPLETS = ['sh', 'httpd', 'wget', 'echo', 'cat', 'id', 'sleep', 'mkdir', 'touch', 'ls', 'pwd', 'env', 'true', 'false', 'test'];

/**
 * A busybox root filesystem under `dir`: /bin with busybox and its applets, /etc/passwd with root only, /var/tmp,
 * and `files` (path relative to the root -> text; mode 0644 unless `executable` lists it).
 */
export async function busyboxRootfs(dir: string, files: Record<string, string> = {}, executable: string[] = []): Promise<string> {
  await mkdir(path.join(dir, 'bin'), { recursive: true });
  await mkdir(path.join(dir, 'etc'), { recursive: true });
  await mkdir(path.join(dir, 'var', 'tmp'), { recursive: true });
  await copyFile(BUSYBOX, path.join(dir, 'bin', 'busybox'));
  for (const applet of APPLETS) await symlink('busybox', path.join(dir, 'bin', applet));
  await writeFile(path.join(dir, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text, { mode: executable.includes(name) ? 0o755 : 0o644 });
  }
  await run('chmod', ['-R', 'a+rX,go-w', dir]);
  return dir;
}

/** An image source of images made in the test, by reference; an unknown reference is refused as a registry would. */
export class TestImageSource implements ImageSource {
  readonly requests: ImageRequest[] = [];
  private readonly images = new Map<string, PreparedImage>();

  add(reference: string, rootfs: string, config: ImageConfig, digest = `sha256:${Buffer.from(reference).toString('hex').padEnd(64, '0').slice(0, 64)}`): PreparedImage {
    const image = { digest, rootfs, config };
    this.images.set(reference, image);
    return image;
  }

  readonly lookups: ImageLookup[] = [];

  async resolve(lookup: ImageLookup): Promise<{ digest: string }> {
    this.lookups.push(lookup);
    const image = this.images.get(lookup.image);
    if (!image) throw new Error(`no image ${lookup.image} in the test's images`);
    return { digest: image.digest };
  }

  async prepare(request: ImageRequest): Promise<PreparedImage> {
    this.requests.push(request);
    const image = this.images.get(request.image);
    if (!image) throw new Error(`no image ${request.image} in the test's images`);
    return image;
  }
}
