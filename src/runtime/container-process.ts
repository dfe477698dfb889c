// What a `container` service's replica runs, from the image config pinned at Sync and the service's keys (spec 2.8):
// `command` replaces ENTRYPOINT and `args` replaces CMD (a `command` without `args` drops CMD, as in Kubernetes),
// the service's env is laid over the image's `Env`, `WorkingDir` is honoured, and the process runs as the
// workspace's UID (or `runAsUser`) with group 0. Pure; every driver starts the same process.
import path from 'node:path';
import type { ContainerProcess } from '../agent/replica-protocol.ts';
import type { ContainerRun } from './driver.ts';

/** Docker's PATH for an image whose `Env` sets none. */
export const DEFAULT_CONTAINER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** HOME when neither the image nor the service sets one: a directory the workspace's UID may write (tmpfs). */
export const DEFAULT_CONTAINER_HOME = '/tmp';

/** The process, or why there is none to start. */
export function containerProcessOf(run: ContainerRun, serviceEnv: Record<string, string>, workspaceUid: number): ContainerProcess | { refused: string } {
  const entrypoint = run.command ?? run.config.Entrypoint ?? [];
  const cmd = run.args ?? (run.command ? [] : (run.config.Cmd ?? []));
  const argv = [...entrypoint, ...cmd];
  if (argv.length === 0) return { refused: `the image ${run.image} has no ENTRYPOINT or CMD, and the service sets no command` };
  if (argv[0] === '') return { refused: 'the command to run is an empty string' };
  return {
    image: run.image,
    digest: run.digest,
    argv,
    env: { PATH: DEFAULT_CONTAINER_PATH, HOME: DEFAULT_CONTAINER_HOME, ...imageEnv(run.config.Env ?? []), ...serviceEnv },
    workingDir: path.posix.resolve('/', run.config.WorkingDir || '/'),
    uid: run.runAsUser ?? workspaceUid,
    imageUser: run.config.User ?? '',
  };
}

/** `NAME=value` entries as a map (a later entry wins; one without a name or `=` is skipped). */
export function imageEnv(entries: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const at = entry.indexOf('=');
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return env;
}
