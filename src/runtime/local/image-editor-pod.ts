// The editor pod and the stage steps of a workspace with a `base_image` (spec 2.3): the image's root read-only as in a
// container pod (container-root.ts), the volume at /data/app, the workspace's /nix read-write (the image's own /nix
// read-only when it has one), the agent on the host's node through the host's loader under /.svc, and the editor:
// the built-in one (run the same way as the agent), an editor command, or code-server from the tools directory bound
// at /.svc/tools (its node runs the image's way, so it needs an image with glibc). Commands, the editor command and
// terminals run by the image's shell (image-shell.ts).
import path from 'node:path';
import { agentEnv } from '../../agent/protocol.ts';
import { DEFAULT_CONTAINER_PATH, imageEnv } from '../container-process.ts';
import { RuntimeFailure, type PinnedRoot, type WorkspaceRef } from '../driver.ts';
import { AGENT_CODE_SERVER, EDITOR_MAIN } from './agent-bundle.ts';
import { agentNodeSetting, CONTAINER_POD_TOOLS_DIR, hostNodeFor, imagePodAgentFile, imagePodCommand, type ImagePodSpec } from './container-pod.ts';
import { readImageRoot } from './container-root.ts';
import { codeServerCommand } from './editor-tools.ts';
import { imageShell } from './image-shell.ts';
import { checkRootfs, hostResolvConf, IMAGE_POD_OWN_TOP, nixOf, splitBinds } from './image-pod-parts.ts';
import { workspaceRuntimeDir } from './replica-files.ts';
import { POD_APP_DIR, type Bind, type DescriptorBind } from './sandbox.ts';
import { volumeDir, type VolumeHost } from './volumes.ts';
import { POD_VOLUME_DIR } from './pod-identity.ts';
import { writeWorkspaceIdentity } from './workspace-identity.ts';
import { podSeccompFile } from './seccomp.ts';

/** Where a pod from an image sees the tools directory (not /opt, which an image may have read-only). */
export const IMAGE_POD_TOOLS_DIR = `${CONTAINER_POD_TOOLS_DIR}/tools`;

export interface ImageEditorHost extends VolumeHost {
  nodePath: string;
  /** An editor command configured for every pod; wins over code-server. */
  editorCommand?: string;
  /** The tools directory holding code-server, when pods run code-server. */
  codeServerTools?: string;
}

/** What the editor pod gets from pods.ts: the agent's bundle, its token, its network and the agent's settings. */
export interface EditorPodParts {
  bundleDir: string;
  hostsFile: string;
  tokenFile: string;
  tokenTarget: string;
  netns?: string;
  /** The agent's settings (addresses, ports, workspace directory, token file). */
  agentEnv: Record<string, string>;
  /** Descriptors bound into the pod (the cgroup's memory events). */
  descriptorBinds?: DescriptorBind[];
}

/** What differs between the editor pod and a stage step's pod: what runs in it and what it sees besides the base. */
type WorkspaceImagePodRun = Pick<ImagePodSpec, 'agent' | 'command' | 'infoFd' | 'dieWithParent'> & {
  hostsFile: string;
  netns?: string;
  /** Bound read-only before a read-only /nix. */
  readOnlyBinds?: Bind[];
  /** Over the image's `Env` and the defaults. */
  env: Record<string, string>;
  /** Descriptors bound into the pod (the cgroup's memory events). */
  descriptorBinds?: DescriptorBind[];
};

/** The editor pod's command line with the workspace's base image as its root. */
export async function imageEditorPodCommand(host: ImageEditorHost, workspace: WorkspaceRef, base: PinnedRoot, parts: EditorPodParts): Promise<{ file: string; args: string[] }> {
  const hostNode = await hostNodeFor(host.nodePath);
  const editor = imagePodEditor(host);
  return workspaceImagePod(host, workspace, base, (shell) => ({
    hostsFile: parts.hostsFile,
    netns: parts.netns,
    agent: { bundle: parts.bundleDir, hostNode },
    readOnlyBinds: [...editor.binds, { source: parts.tokenFile, target: parts.tokenTarget }],
    descriptorBinds: parts.descriptorBinds ?? [],
    env: {
      ...parts.agentEnv,
      [agentEnv.editorScript]: imagePodAgentFile(EDITOR_MAIN),
      [agentEnv.shell]: shell,
      [agentEnv.node]: agentNodeSetting(hostNode),
      ...(editor.command ? { [agentEnv.editorCommand]: editor.command } : {}),
    },
    infoFd: 3,
  }));
}

/** A stage step in the workspace's base image: `<shell> -lc <run>` in /data/app, dying with the server. */
export async function imageStageStepCommand(
  host: ImageEditorHost,
  workspace: WorkspaceRef,
  base: PinnedRoot,
  step: { hostsFile: string; netns?: string; env: Record<string, string>; script: string },
): Promise<{ file: string; args: string[] }> {
  return workspaceImagePod(host, workspace, base, (shell) => ({
    hostsFile: step.hostsFile,
    netns: step.netns,
    command: [shell, '-lc', `umask 0002; ${step.script}`],
    env: step.env,
    dieWithParent: true,
  }));
}

/**
 * A pod of the workspace on its base image, as the editor pod and stage steps share it: the workspace's UID with
 * group 0, the image's root read-only with the pod's own hosts, passwd, group and resolv.conf, the volume at /data
 * (the code at /data/app, where it starts; HOME at /data/home), /nix (read-write unless the image has its own), and the image's `Env`; `run` (given the
 * image's shell) says what runs and what else it sees.
 */
async function workspaceImagePod(
  host: ImageEditorHost,
  workspace: WorkspaceRef,
  base: PinnedRoot,
  run: (shell: string) => WorkspaceImagePodRun,
): Promise<{ file: string; args: string[] }> {
  await checkRootfs(base, 'starting the workspace again fetches it', 'ide');
  const root = await readImageRoot(base.rootfs);
  const shell = await imageShell(base.rootfs);
  if (!shell) throw new RuntimeFailure('ide', `the base image ${base.image} has no shell (/bin/bash or /bin/sh), which the editor and terminals run in`);
  const identity = await writeWorkspaceIdentity(workspace, path.join(workspaceRuntimeDir(host.dataDir, workspace.id), 'editor'), base.rootfs, shell);
  // the editor pod is where one installs into /nix; an image with a /nix of its own keeps it read-only
  const nix = splitBinds((await nixOf(host, workspace, { root, image: base.image }, true, true)).binds);
  const pod = run(shell);
  return imagePodCommand({
    seccomp: podSeccompFile(host.dataDir),
    hostUid: workspace.uid,
    podUid: workspace.uid,
    switchUser: host.asRoot,
    netns: pod.netns,
    hostname: identity.hostname,
    root,
    files: { hostsFile: pod.hostsFile, passwdFile: identity.passwdFile, groupFile: identity.groupFile, resolvConf: await hostResolvConf(host.dataDir) },
    ownTop: IMAGE_POD_OWN_TOP,
    agent: pod.agent,
    command: pod.command,
    readOnlyBinds: [...(pod.readOnlyBinds ?? []), ...nix.readOnly],
    writableBinds: [{ source: volumeDir(host, workspace.id), target: POD_VOLUME_DIR }, ...nix.writable],
    descriptorBinds: pod.descriptorBinds ?? [],
    env: { ...imagePodEnv(base), ...identity.env, ...pod.env },
    infoFd: pod.infoFd,
    dieWithParent: pod.dieWithParent,
    chdir: POD_APP_DIR,
  });
}

/** PATH and LANG as on the machine's system, the image's `Env` over them (HOME, USER and SHELL are the identity's). */
function imagePodEnv(base: PinnedRoot): Record<string, string> {
  return { PATH: DEFAULT_CONTAINER_PATH, LANG: 'C.UTF-8', ...imageEnv(base.config.Env ?? []) };
}

/** The editor of a pod from an image: the configured command, code-server from /.svc/tools, else the built-in one. */
function imagePodEditor(host: ImageEditorHost): { command?: string; binds: Bind[] } {
  if (host.editorCommand && !host.codeServerTools) return { command: host.editorCommand, binds: [] };
  if (host.codeServerTools) return { command: codeServerCommand(IMAGE_POD_TOOLS_DIR, imagePodAgentFile(AGENT_CODE_SERVER)), binds: [{ source: host.codeServerTools, target: IMAGE_POD_TOOLS_DIR }] };
  return { binds: [] };
}

