// The command line of a pod whose root is an image (a container replica's, and a steps replica's or editor pod's
// from an `image` or `base_image`): bubblewrap with the image's root read-only (container-root.ts), run
// as the workspace's UID with group 0 on the host and as the pod's UID inside (the workspace's, or `runAsUser`, which
// the user namespace maps to the workspace's UID), the agent as its main process. The image need not have node or
// a shell: the agent runs on the host's node, started through the host's dynamic loader with the host's libraries,
// all bound read-only under /.svc, so nothing of the image is used by the agent nor of the host by the image.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { RuntimeFailure } from '../driver.ts';
import { AGENT_MAIN } from './agent-bundle.ts';
import { imageRootArgs, SEAL_ROOT_ARGS, type ImageRoot, type PodFiles } from './container-root.ts';
import { runCommand } from './processes.ts';
import { descriptorBindArgs, netnsEnter, seccompParts, type Bind, type DescriptorBind } from './sandbox.ts';

/** Where the pod's machinery appears in a container pod: a top-level name no image uses. */
export const CONTAINER_POD_TOOLS_DIR = '/.svc';
const POD_AGENT_DIR = `${CONTAINER_POD_TOOLS_DIR}/agent`;
const POD_HOST_DIR = `${CONTAINER_POD_TOOLS_DIR}/host`;

/** How the pod runs the host's node: what to bind and the command before the script. */
export interface HostNode {
  binds: Bind[];
  command: string[];
}

const found = new Map<string, Promise<HostNode>>();

/** The host's node as a container pod runs it (found once per process). */
export function hostNodeFor(nodePath: string): Promise<HostNode> {
  let node = found.get(nodePath);
  if (!node) {
    node = findHostNode(nodePath);
    node.catch(() => found.delete(nodePath));
    found.set(nodePath, node);
  }
  return node.catch((error: Error) => {
    throw new RuntimeFailure('agent', `the host's node cannot be run in a container pod: ${error.message}`);
  });
}

const podPathOf = (hostPath: string) => path.posix.join(POD_HOST_DIR, hostPath);

/** node, its loader and the directories of its libraries, from `ldd` (a static node needs only itself). */
async function findHostNode(nodePath: string): Promise<HostNode> {
  const node = await realpath(nodePath);
  const result = await runCommand('ldd', [node], { timeoutMs: 10_000 });
  const output = `${result.stdout}\n${result.stderr}`;
  if (/not a dynamic executable|statically linked/.test(output)) return { binds: [{ source: node, target: podPathOf(node) }], command: [podPathOf(node)] };
  if (result.code !== 0) throw new Error(`ldd ${node}: ${result.stderr.trim() || `exit code ${result.code}`}`);
  const libraries: string[] = [];
  let loader: string | undefined;
  for (const line of result.stdout.split('\n')) {
    const library = /=>\s+(\/\S+)\s+\(/.exec(line);
    const interpreter = /^\s*(\/\S+)\s+\(/.exec(line);
    if (library) libraries.push(await realpath(library[1]));
    else if (interpreter) loader = await realpath(interpreter[1]);
  }
  if (!loader) throw new Error(`ldd ${node} names no dynamic loader`);
  const libraryDirs = [...new Set([path.dirname(loader), ...libraries.map((library) => path.dirname(library))])];
  return {
    binds: [...libraryDirs.map((dir) => ({ source: dir, target: podPathOf(dir) })), { source: node, target: podPathOf(node) }],
    command: [podPathOf(loader), '--library-path', libraryDirs.map(podPathOf).join(':'), podPathOf(node)],
  };
}

export interface ImagePodSpec {
  /** The workspace's UID: the pod's processes belong to it on the host. */
  hostUid: number;
  /** The UID its processes see inside (the workspace's, or a container's `runAsUser`). */
  podUid: number;
  /** The server is root: become the workspace UID on the host too (setpriv). */
  switchUser: boolean;
  netns?: string;
  hostname: string;
  root: ImageRoot;
  files: PodFiles;
  /** Top-level names of the image the pod provides itself (`data` in a pod with the volume at /data/app). */
  ownTop?: string[];
  /** The agent as the pod's main process: its bundle and the host's node. */
  agent?: { bundle: string; hostNode: HostNode };
  /** What runs instead of the agent (a stage step's shell). */
  command?: string[];
  /** Bound read-only after the agent (the editor's tools, the agent's token file, a read-only /nix). */
  readOnlyBinds?: Bind[];
  /** Bound read-write: the replica's own directory at /run/svc, the volume at /data/app, a writable /nix. */
  writableBinds: Bind[];
  /** Open descriptors of `mounts`, bound read-write last. */
  descriptorBinds: DescriptorBind[];
  env: Record<string, string>;
  infoFd?: number;
  /** Kill the pod when the process that started it dies (a stage step; not for pods, which outlive the server). */
  dieWithParent?: boolean;
  /** Where the agent starts; default `/`. */
  chdir?: string;
  /** The compiled seccomp filter (seccomp.ts `podSeccompFile`); undefined runs without one. */
  seccomp: string | undefined;
}

/** The agent's entry script as a pod from an image sees it (the built-in editor's is beside it). */
export const imagePodAgentFile = (file: string) => path.posix.join(POD_AGENT_DIR, file);

/** How the agent in a pod from an image starts node itself (the built-in editor): the host's, through its loader. */
export const agentNodeSetting = (hostNode: HostNode) => JSON.stringify(hostNode.command);

/** The command line of a pod whose root is an image: a container replica, a steps replica or editor pod from an image. */
export function imagePodCommand(spec: ImagePodSpec): { file: string; args: string[] } {
  const uid = String(spec.hostUid);
  const seccomp = seccompParts(spec.seccomp, [spec.infoFd ?? 0, ...spec.descriptorBinds.map((bind) => bind.fd)]);
  const wrappers = [
    ...seccomp.wrapper,
    ...(spec.netns ? netnsEnter(spec.netns) : []),
    ...(spec.switchUser ? ['setpriv', '--reuid', uid, '--regid', '0', '--clear-groups'] : []),
  ];
  const agent = spec.agent;
  const agentBinds = agent ? [...agent.hostNode.binds, { source: agent.bundle, target: POD_AGENT_DIR }] : [];
  const binds = [...agentBinds, ...(spec.readOnlyBinds ?? [])];
  const command = agent ? [...agent.hostNode.command, imagePodAgentFile(AGENT_MAIN)] : spec.command;
  if (!command) throw new Error('an image pod runs the agent or a command');
  const bwrap = [
    'bwrap',
    ...imageRootArgs(spec.root, spec.files, spec.ownTop),
    ...binds.flatMap((bind) => ['--ro-bind', bind.source, bind.target]),
    ...spec.writableBinds.flatMap((bind) => ['--bind', bind.source, bind.target]),
    ...spec.descriptorBinds.flatMap(descriptorBindArgs),
    ...SEAL_ROOT_ARGS,
    '--unshare-pid', '--unshare-user', '--unshare-ipc', '--unshare-uts', '--hostname', spec.hostname,
    '--uid', String(spec.podUid), '--gid', '0',
    ...(spec.dieWithParent ? ['--die-with-parent'] : []),
    ...(spec.infoFd !== undefined ? ['--info-fd', String(spec.infoFd)] : []),
    ...seccomp.bwrapArgs,
    '--clearenv', ...Object.entries(spec.env).flatMap(([name, value]) => ['--setenv', name, value]),
    '--chdir', spec.chdir ?? '/',
    ...command,
  ];
  const [file, ...args] = [...wrappers, ...bwrap];
  return { file, args };
}
