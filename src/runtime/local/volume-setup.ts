// Filling a new volume, each in a short-lived sandbox as the workspace UID: the git clone, or the check that an
// empty workspace's volume is usable. Failures carry the reason the workspace shows (spec 3.1).
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cloneAuthenticationReason } from '../../git/clone-failure.ts';
import type { GitSource, WorkspaceRef } from '../driver.ts';
import { RuntimeFailure } from '../driver.ts';
import { cloneFailureReason, cloneInput, cloneScript, localRepositoryPath } from './clone-plan.ts';
import { runCommand } from './processes.ts';
import { isInside, sandboxCommand, type Bind, type SandboxSpec } from './sandbox.ts';
import { appDir, createVolumeDir, ensureWorkspaceLayout, exists, type VolumeHost } from './volumes.ts';
import { workspaceSandboxParts } from './workspace-identity.ts';
import { podSeccompFile } from './seccomp.ts';
import { podNetworkOf } from './addresses.ts';
import { ensurePodNetwork, networkOwner } from './network.ts';
import { resolvConfBinds } from './image-pod-parts.ts';
import { installationTag } from './installation.ts';

export interface SetupOptions extends VolumeHost {
  cloneTimeoutMs: number;
  /** The pods' address range: a clone as root runs in the editor pod's network namespace (under the egress policy). */
  addressRange: string;
}

export async function setupSandbox(host: VolumeHost, workspace: WorkspaceRef, script: string, binds: Bind[], network: boolean, netns?: string): Promise<SandboxSpec> {
  await createVolumeDir(host, workspace.id, workspace.uid, workspace.storageGib);
  await ensureWorkspaceLayout(host, workspace.id, workspace.uid);
  const parts = await workspaceSandboxParts(host, workspace);
  return {
    seccomp: podSeccompFile(host.dataDir),
    uid: workspace.uid,
    switchUser: host.asRoot,
    netns,
    isolateNetwork: !network,
    hostname: parts.hostname,
    volumeDir: parts.volumeDir,
    volumeAt: parts.volumeAt,
    readOnlyBinds: [...binds, ...parts.identityBinds],
    env: { ...parts.identityEnv, GIT_TERMINAL_PROMPT: '0' },
    dieWithParent: true,
    script,
  };
}

/**
 * Clones into the empty volume. A repository on this machine is bound read-only at its own path and the sandbox
 * gets no network; any other URL is fetched, as root, from the editor pod's network namespace (made now, kept for
 * the editor's start) under the installation's egress policy, whatever the workspace's own egress: the internet
 * is reached, the host's loopback and other addresses, pods and private ranges are not (no SSRF through
 * `git.repo`). Without root the clone shares the host's network. A failed clone leaves the volume empty.
 */
export async function cloneIntoVolume(host: SetupOptions, workspace: WorkspaceRef, source: GitSource): Promise<void> {
  const local = localRepositoryPath(source.url);
  if (local && isInside(local, host.dataDir)) throw new RuntimeFailure('clone', `the repository ${local} contains the data directory`);
  const binds = local && (await exists(local)) ? [{ source: local, target: local }] : [];
  const podNetwork = host.asRoot && local === undefined ? podNetworkOf(installationTag(host.dataDir), workspace.id, host.addressRange) : undefined;
  if (podNetwork) {
    await ensurePodNetwork(podNetwork, host.addressRange, networkOwner(host.dataDir), 'on').catch((error: Error) => {
      throw new RuntimeFailure('clone', `the clone's network could not be set up: ${error.message}`);
    });
    binds.push(...(await resolvConfBinds(host.dataDir)));
  }
  // the sandbox's passwd names the workspace UID (workspace-identity.ts): ssh refuses to run without it
  const command = sandboxCommand(await setupSandbox(host, workspace, cloneScript(source), binds, local === undefined, podNetwork?.netns));
  const result = await runCommand(command.file, command.args, { timeoutMs: host.cloneTimeoutMs, input: cloneInput(source) ?? '' });
  if (result.code === 0) return;
  await emptyDirectory(appDir(host, workspace.id));
  if (result.code === null) throw new RuntimeFailure('clone', `the clone took longer than ${host.cloneTimeoutMs / 1000} s`);
  throw new RuntimeFailure('clone', cloneAuthenticationReason(cloneFailureReason(result.stderr, result.code), result.stderr, source.credential));
}

/** Checks, as the workspace UID inside a sandbox, that the empty volume is there and writable. */
export async function prepareEmptyVolumeDir(host: VolumeHost, workspace: WorkspaceRef): Promise<void> {
  const probe = '.svc-volume-probe';
  const script = `touch ${probe} && rm ${probe} && touch ~/${probe} && rm ~/${probe}`;
  const command = sandboxCommand(await setupSandbox(host, workspace, script, [], false));
  const result = await runCommand(command.file, command.args, { timeoutMs: 60_000 });
  if (result.code !== 0) {
    const reason = result.stderr.trim().split('\n').at(-1) || `exit code ${result.code}`;
    throw new RuntimeFailure('prepare-volume', reason.replace(/^bwrap:\s*/, ''));
  }
}

async function emptyDirectory(dir: string): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) await rm(path.join(dir, name), { recursive: true, force: true });
}
