// Where the local driver keeps a workspace's runtime files besides its editor pod's record, all under
// <data dir>/pods/<id>/: the hosts file every pod of the workspace sees, its service network, its replicas' records,
// directories and logs, and its stage steps' logs. A restarted server finds everything again from these files.
import { chmod, chown, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Started } from './pods.ts';

export interface ReplicaRecord extends Started {
  workspaceId: number;
  uid: number;
  service: string;
  index: number;
  /** The replica's own network namespace (server as root). */
  netns?: string;
  /** Where the server and the workspace's pods reach the replica. */
  host: string;
  agentPort: number;
  startedAt: string;
  /** Its pod was ended on purpose (stopReplica, stopWorkspace): it reads as `stopped`. */
  stoppedAt?: string;
  /** Its pod never ran (bubblewrap refused it): why, so that it reads as `failure` with that reason. */
  failedToStart?: string;
  /** What the server's exec and port-forward streams carry to the agent (absent: a pod of an older server). */
  agentToken?: string;
}

export const workspaceRuntimeDir = (dataDir: string, id: number) => path.join(dataDir, 'pods', String(id));
export const hostsFileOf = (dataDir: string, id: number) => path.join(workspaceRuntimeDir(dataDir, id), 'hosts');
const replicasDir = (dataDir: string, id: number) => path.join(workspaceRuntimeDir(dataDir, id), 'replicas');
const replicaName = (service: string, index: number) => `${service}-${index}`;

/** The replica's record (root only). */
export const replicaRecordFile = (dataDir: string, id: number, service: string, index: number) =>
  path.join(replicasDir(dataDir, id), `${replicaName(service, index)}.json`);
/** What the sandbox itself printed: bubblewrap's errors, a crash of the agent (root only). */
export const replicaOutputFile = (dataDir: string, id: number, service: string, index: number) =>
  path.join(replicasDir(dataDir, id), `${replicaName(service, index)}.out`);
/** The /etc/passwd of a container replica's pod (root's, readable by the pod). */
export const replicaPasswdFile = (dataDir: string, id: number, service: string, index: number) =>
  path.join(replicasDir(dataDir, id), `${replicaName(service, index)}.passwd`);
/** The base of the passwd and group files of a steps replica's pod from an image (workspace-identity.ts). */
export const replicaIdentityBase = (dataDir: string, id: number, service: string, index: number) =>
  path.join(replicasDir(dataDir, id), `${replicaName(service, index)}.identity`);
/** The replica's own directory, bound at /run/svc in its pod: its settings and its log (the workspace UID's). */
export const replicaDirOf = (dataDir: string, id: number, service: string, index: number) =>
  path.join(replicasDir(dataDir, id), replicaName(service, index));
/** A stage step's log (root only). */
export const stageStepDirOf = (dataDir: string, id: number, key: string) => path.join(workspaceRuntimeDir(dataDir, id), 'steps', key);

/**
 * Creates the directories down to the workspace's replicas. Pods are set up by the workspace UID, which must pass
 * through them (x) to its hosts file and its replicas' directories, but may list none of them.
 */
export async function createRuntimeDirs(dataDir: string, id: number): Promise<void> {
  for (const dir of [path.join(dataDir, 'pods'), workspaceRuntimeDir(dataDir, id), replicasDir(dataDir, id)]) {
    await mkdir(dir, { recursive: true, mode: 0o711 });
    await chmod(dir, 0o711);
  }
}

/** A fresh directory of the replica for its pod, owned by the workspace UID (as root) and private to it. */
export async function createReplicaDir(dir: string, uid: number, asRoot: boolean): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (asRoot) await chown(dir, uid, 0);
  await chmod(dir, 0o700);
}

export async function readReplicaRecord(dataDir: string, id: number, service: string, index: number): Promise<ReplicaRecord | undefined> {
  const text = await readFile(replicaRecordFile(dataDir, id, service, index), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as ReplicaRecord);
}

export async function writeReplicaRecord(dataDir: string, record: ReplicaRecord): Promise<void> {
  const file = replicaRecordFile(dataDir, record.workspaceId, record.service, record.index);
  await writeFile(`${file}.partial`, JSON.stringify(record, null, 2), { mode: 0o600 });
  await rename(`${file}.partial`, file);
}

/** Every replica of the workspace the driver has a record of, by service and index. */
export async function listReplicaRecords(dataDir: string, id: number): Promise<ReplicaRecord[]> {
  const names = await readdir(replicasDir(dataDir, id)).catch(() => [] as string[]);
  const records: ReplicaRecord[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const text = await readFile(path.join(replicasDir(dataDir, id), name), 'utf8').catch(() => undefined);
    if (text !== undefined) records.push(JSON.parse(text) as ReplicaRecord);
  }
  return records.sort((a, b) => a.service.localeCompare(b.service) || a.index - b.index);
}
