// `svc images build`: runs scripts/test-cluster/images.sh (the images built offline and cached in the tools
// directory) and, with a destination, copies each image from the script's OCI layout to the operator's registry
// with skopeo. Credentials reach skopeo in a containers-auth.json of mode 0600 in a private temporary directory
// (`--dest-authfile`), never in its argv; without them skopeo uses its own (REGISTRY_AUTH_FILE, `skopeo login`).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { layoutTag, parseImagesScriptOutput, pushedReference, registryAuthFile, type BuiltImages, type RuntimeImageName } from './runtime-images.ts';

const SCRIPT = path.join('scripts', 'test-cluster', 'images.sh');

/** The project directory holding the script: looked for upwards, so the sources and the prebuilt CLI both find it. */
export function imagesScript(from = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, SCRIPT))) return path.join(dir, SCRIPT);
    if (path.dirname(dir) === dir) throw new Error(`${SCRIPT} is not in any directory above ${from}: is svc installed from its full package?`);
  }
}

interface Run {
  code: number | null;
  stdout: string;
  /** The last lines of its standard error, for the failure's reason. */
  lastError: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, onError: (text: string) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let lastError = '';
    child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      onError(chunk.toString());
      lastError = (lastError + chunk.toString()).split('\n').slice(-6).join('\n');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, lastError: lastError.trim() }));
  });
}

export interface BuildOptions {
  /** Where the cache lives (SVC_TOOLS_DIR); the script's default when absent. */
  toolsDir?: string;
  /** The script's progress lines, as they come. */
  progress: (text: string) => void;
}

export async function buildRuntimeImages(options: BuildOptions): Promise<BuiltImages> {
  const env = { ...process.env, ...(options.toolsDir ? { SVC_TOOLS_DIR: options.toolsDir } : {}) };
  const result = await run('bash', [imagesScript()], env, options.progress);
  if (result.code !== 0) throw new Error(`building the images failed (exit ${result.code}): ${result.lastError || 'no output'}`);
  return parseImagesScriptOutput(result.stdout);
}

export interface PushOptions {
  destination: { registry: string; prefix: string };
  /** false: the registry may answer over plain HTTP or with a certificate not trusted here. */
  tlsVerify: boolean;
  credentials?: { username: string; password: string };
  progress: (text: string) => void;
}

export interface PushedImage {
  name: RuntimeImageName;
  /** `<registry>/<prefix>/<name>:<key>@sha256:…`: what `--kube-<name>-image` takes. */
  reference: string;
  digest: string;
}

export async function pushRuntimeImages(built: BuiltImages, options: PushOptions): Promise<PushedImage[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-images-push-'));
  try {
    const args = ['copy', '--quiet', `--dest-tls-verify=${options.tlsVerify}`];
    if (options.credentials) {
      const authFile = path.join(dir, 'auth.json');
      await writeFile(authFile, registryAuthFile(options.destination.registry, options.credentials.username, options.credentials.password), { mode: 0o600 });
      args.push('--dest-authfile', authFile);
    }
    const pushed: PushedImage[] = [];
    for (const image of built.images) {
      const target = pushedReference(options.destination, image);
      const digestFile = path.join(dir, `${image.name}.digest`);
      options.progress(`images: pushing ${image.name} to ${target}\n`);
      const result = await run('skopeo', [...args, '--digestfile', digestFile, `oci:${built.layout}:${layoutTag(image)}`, `docker://${target}`], process.env, () => undefined);
      if (result.code !== 0) throw new Error(`pushing ${image.name} to ${target} failed: ${result.lastError || `skopeo exited with ${result.code}`}`);
      const digest = (await readFile(digestFile, 'utf8')).trim();
      pushed.push({ name: image.name, reference: `${target}@${digest}`, digest });
    }
    return pushed;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
