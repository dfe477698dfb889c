// The command line of a sandbox (a pod, or the short-lived sandbox a clone runs in), as pure data: bubblewrap with
// a minimal root (the host's /usr and /etc read-only, nothing else of the host), the code at /data/app, its own
// user, PID, IPC and UTS namespaces, run as the workspace UID with group 0.
import path from 'node:path';

export const POD_APP_DIR = '/data/app';
export const POD_NIX_DIR = '/nix';
/** Where the agent's sources and node_modules appear inside a pod (read-only). */
export const POD_PROJECT_DIR = '/opt/svc';
const POD_PATH = '/usr/local/bin:/usr/bin:/bin';

export interface Bind {
  source: string;
  target: string;
}

/** An open descriptor the sandbox inherits, bound at `target` (read-only: a file of the pod's cgroup, pod-limits.ts). */
export interface DescriptorBind {
  fd: number;
  target: string;
  readOnly?: boolean;
}

export const descriptorBindArgs = (bind: DescriptorBind) => [bind.readOnly ? '--ro-bind-fd' : '--bind-fd', String(bind.fd), bind.target];

/**
 * Enters a network namespace made by `ip netns add`. Not `ip netns exec`: that also remounts /sys, and the pod's
 * cgroup files (pod-limits.ts) would not be found there.
 */
export const netnsEnter = (netns: string) => ['nsenter', `--net=/run/netns/${netns}`, '--'];

/**
 * What makes a sandbox run under the pods' seccomp filter (seccomp.ts): an outer `bash` opens the compiled program
 * on a descriptor above every other one the sandbox is handed (`usedFds`), then becomes the rest of the command
 * (pid kept), and bubblewrap reads it there (`--seccomp`) and closes it. Nothing when there is no filter file.
 */
export function seccompParts(file: string | undefined, usedFds: number[]): { wrapper: string[]; bwrapArgs: string[] } {
  if (!file) return { wrapper: [], bwrapArgs: [] };
  const fd = Math.max(9, ...usedFds) + 1;
  return { wrapper: ['bash', '-c', `exec "$@" ${fd}<"$0"`, file], bwrapArgs: ['--seccomp', String(fd)] };
}

export interface SandboxSpec {
  uid: number;
  /** The server is root: become the workspace UID on the host too (setpriv), so files belong to it there. */
  switchUser: boolean;
  /** Run inside this network namespace (netnsEnter); it must exist. */
  netns?: string;
  /** An empty network of the sandbox's own (only a loopback that is down): for work that needs no network. */
  isolateNetwork: boolean;
  hostname: string;
  volumeDir: string;
  /**
   * Where `volumeDir` appears: /data/app (a managed instance's directory, the default), or /data for a workspace's
   * volume, whose code is its app/ (volume-layout.ts).
   */
  volumeAt?: string;
  readOnlyBinds: Bind[];
  /** Read-write, after the read-only ones: a replica's own directory. */
  writableBinds?: Bind[];
  /** Open descriptors the sandbox inherits at these numbers, bound read-write last: a replica's `mounts`. */
  descriptorBinds?: DescriptorBind[];
  /** The workspace's /nix directory (volumes.ts), read-only unless `writable`. */
  nix?: { dir: string; writable: boolean };
  env: Record<string, string>;
  /** bubblewrap writes `{"child-pid": ...}` here once the sandbox runs. */
  infoFd?: number;
  /** Kill the sandbox when the process that started it dies (not for pods: they outlive the server). */
  dieWithParent: boolean;
  /** Shell text, run with `bash -lc` in /data/app. */
  script: string;
  /** The compiled seccomp filter (seccomp.ts `podSeccompFile`); undefined runs without one (no filter for this machine). */
  seccomp: string | undefined;
}

export function sandboxCommand(spec: SandboxSpec): { file: string; args: string[] } {
  const uid = String(spec.uid);
  const seccomp = seccompParts(spec.seccomp, [spec.infoFd ?? 0, ...(spec.descriptorBinds ?? []).map((bind) => bind.fd)]);
  const wrappers = [
    ...seccomp.wrapper,
    ...(spec.netns ? netnsEnter(spec.netns) : []),
    ...(spec.switchUser ? ['setpriv', '--reuid', uid, '--regid', '0', '--clear-groups'] : []),
  ];
  const bwrap = [
    'bwrap',
    ...rootFilesystemArgs(spec),
    '--unshare-pid', '--unshare-user', '--unshare-ipc', '--unshare-uts', '--hostname', spec.hostname,
    ...(spec.isolateNetwork ? ['--unshare-net'] : []),
    '--uid', uid, '--gid', '0',
    ...(spec.dieWithParent ? ['--die-with-parent'] : []),
    ...(spec.infoFd !== undefined ? ['--info-fd', String(spec.infoFd)] : []),
    ...seccomp.bwrapArgs,
    ...environmentArgs(spec.env),
    '--chdir', POD_APP_DIR,
    'bash', '-lc', `umask 0002; ${spec.script}`,
  ];
  const [file, ...args] = [...wrappers, ...bwrap];
  return { file, args };
}

function rootFilesystemArgs(spec: SandboxSpec): string[] {
  return [
    '--tmpfs', '/',
    '--ro-bind', '/usr', '/usr',
    '--symlink', 'usr/bin', '/bin',
    '--symlink', 'usr/lib', '/lib',
    '--symlink', 'usr/lib64', '/lib64',
    '--symlink', 'usr/sbin', '/sbin',
    '--ro-bind', '/etc', '/etc',
    '--tmpfs', '/tmp',
    '--dev', '/dev',
    '--proc', '/proc',
    ...((spec.volumeAt ?? POD_APP_DIR) === POD_APP_DIR ? ['--dir', '/data'] : []),
    '--bind', spec.volumeDir, spec.volumeAt ?? POD_APP_DIR,
    ...(spec.nix ? [spec.nix.writable ? '--bind' : '--ro-bind', spec.nix.dir, POD_NIX_DIR] : []),
    ...spec.readOnlyBinds.flatMap((bind) => ['--ro-bind', bind.source, bind.target]),
    ...(spec.writableBinds ?? []).flatMap((bind) => ['--bind', bind.source, bind.target]),
    ...(spec.descriptorBinds ?? []).flatMap(descriptorBindArgs),
    '--remount-ro', '/',
  ];
}

/** The pod sees none of the server's environment (it holds the database URL, among others). */
function environmentArgs(env: Record<string, string>): string[] {
  const all = { PATH: POD_PATH, HOME: POD_APP_DIR, LANG: 'C.UTF-8', ...env };
  return ['--clearenv', ...Object.entries(all).flatMap(([name, value]) => ['--setenv', name, value])];
}

/**
 * What a pod needs of the host to run the agent: the agent bundle under /opt/svc, and the node binary's directory
 * when it is not under /usr. Never the project or the data directory.
 */
export function agentBinds(bundleDir: string, nodePath: string): Bind[] {
  const binds: Bind[] = [{ source: bundleDir, target: POD_PROJECT_DIR }];
  const nodeDir = path.dirname(nodePath);
  if (!isInside('/usr', nodeDir)) binds.push({ source: nodeDir, target: nodeDir });
  return binds;
}

/** The path of `hostPath` inside the pod, when one of `binds` shows it. */
export function podPathOf(hostPath: string, binds: Bind[]): string | undefined {
  for (const bind of binds) {
    if (isInside(bind.source, hostPath)) return path.posix.join(bind.target, path.relative(bind.source, hostPath));
  }
  if (isInside('/usr', hostPath)) return hostPath;
  return undefined;
}


export function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
