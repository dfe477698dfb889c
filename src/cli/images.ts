// `svc images build [--push REGISTRY/PREFIX] [--tls-verify=false] [--json]`: the Kubernetes driver's runtime images
// (base, agent, managed) and svc's own server image built offline on this machine, cached in the tools directory, and pushed to the operator's
// registry with their digests (docs/kubernetes.md, "Images"). Runs where the CLI runs, not on a server.
import { parsePushDestination, runtimeImageFlags } from '../runtime/kubernetes/runtime-images.ts';
import { buildRuntimeImages, pushRuntimeImages } from '../runtime/kubernetes/runtime-images-build.ts';
import type { CommandIo } from './main.ts';

const usage = `Usage: svc images build [--push REGISTRY/PREFIX] [--tls-verify=false] [--json]

Builds the Kubernetes driver's images and svc's server image offline (Debian packages through this machine's apt
sources, the agent bundle, node, the managed engines, svc itself with nginx), cached in \${SVC_TOOLS_DIR:-/var/cache/svc/tools}/kube-images; needs root,
mmdebstrap, umoci and skopeo.
  --push REGISTRY/PREFIX  copy them to REGISTRY/PREFIX/{base,agent,managed,server}:<key> and print the references
                          with their digests, for svc server's --kube-base-image, --kube-agent-image,
                          --kube-managed-image, and server-image= for the image of deploy/kubernetes/svc.yaml
                          (credentials from SVC_REGISTRY_USERNAME and SVC_REGISTRY_PASSWORD, else skopeo's own)
  --tls-verify=false      the registry answers over plain HTTP or with a certificate not trusted here
  --json                  print the result as JSON
`;

interface ImagesArguments {
  push?: string;
  tlsVerify: boolean;
  json: boolean;
}

function parseArguments(argv: string[]): ImagesArguments | 'help' | string {
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') return 'help';
  if (argv[0] !== 'build') return argv[0] === undefined ? 'name a command: build' : `unknown command "${argv[0]}" (svc images build)`;
  const out: ImagesArguments = { tlsVerify: true, json: false };
  for (let i = 1; i < argv.length; i++) {
    const argument = argv[i];
    if (argument === '--help' || argument === '-h') return 'help';
    else if (argument === '--json') out.json = true;
    else if (argument === '--push' || argument.startsWith('--push=')) {
      const value = argument === '--push' ? argv[++i] : argument.slice('--push='.length);
      if (!value) return '--push needs REGISTRY/PREFIX';
      out.push = value;
    } else if (argument === '--tls-verify' || argument.startsWith('--tls-verify=')) {
      const value = argument === '--tls-verify' ? 'true' : argument.slice('--tls-verify='.length);
      if (value !== 'true' && value !== 'false') return `--tls-verify takes true or false, not "${value}"`;
      out.tlsVerify = value === 'true';
    } else return `unknown argument "${argument}"`;
  }
  if (!out.tlsVerify && !out.push) return '--tls-verify=false is only for --push';
  return out;
}

function credentialsFromEnv(env: NodeJS.ProcessEnv): { username: string; password: string } | undefined | string {
  const username = env.SVC_REGISTRY_USERNAME;
  const password = env.SVC_REGISTRY_PASSWORD;
  if (!username && !password) return undefined;
  if (!username || !password) return 'SVC_REGISTRY_USERNAME and SVC_REGISTRY_PASSWORD go together: set both or neither';
  return { username, password };
}

export async function imagesCommand(argv: string[], io: CommandIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseArguments(argv);
  if (parsed === 'help') {
    io.stdout(usage);
    return 0;
  }
  if (typeof parsed === 'string') {
    io.stderr(`svc images: ${parsed}\n\n${usage}`);
    return 2;
  }
  let destination;
  const credentials = credentialsFromEnv(env);
  try {
    if (parsed.push) destination = parsePushDestination(parsed.push);
  } catch (error) {
    io.stderr(`svc images: ${(error as Error).message}\n`);
    return 2;
  }
  if (typeof credentials === 'string') {
    io.stderr(`svc images: ${credentials}\n`);
    return 2;
  }
  try {
    const built = await buildRuntimeImages({ toolsDir: env.SVC_TOOLS_DIR || undefined, progress: io.stderr });
    const pushed = destination ? await pushRuntimeImages(built, { destination, tlsVerify: parsed.tlsVerify, credentials, progress: io.stderr }) : undefined;
    if (parsed.json) {
      io.stdout(`${JSON.stringify({ layout: built.layout, images: built.images, pushed }, null, 2)}\n`);
    } else if (pushed) {
      io.stdout(pushed.map((image) => `${runtimeImageFlags[image.name]}=${image.reference}\n`).join(''));
    } else {
      io.stdout(built.images.map((image) => `${image.name.padEnd(8)} ${image.reference}  ${image.archive}\n`).join(''));
    }
    return 0;
  } catch (error) {
    io.stderr(`svc images: ${(error as Error).message}\n`);
    return 1;
  }
}
