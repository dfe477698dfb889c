// Reading a workspace's landscape file on the Kubernetes driver: the volume is on the cluster, so the editor pod's
// agent reads it (a command over its exec stream). While no editor pod runs, the file cannot be read and the answer
// says so; it is never taken for missing.
import { isProfileName, profileOfFileName } from '../../landscape/index.ts';
import { LANDSCAPE_FILE_LIMIT, type LandscapeFileRead, type WorkspaceFiles } from '../workspace-files.ts';
import type { WorkspaceRef } from '../driver.ts';
import type { AgentEndpoint } from '../agent-connection.ts';
import { execCollect } from './agent-streams.ts';

/** Exit codes of the read script: 3 missing, 4 not a regular file (a directory or a link). */
const READ_SCRIPT = 'f="$1"; if [ -L "$f" ]; then exit 4; fi; if [ ! -e "$f" ]; then exit 3; fi; if [ ! -f "$f" ]; then exit 4; fi; head -c "$2" -- "$f"';

export function createKubernetesWorkspaceFiles(endpointOfEditor: (workspace: WorkspaceRef) => Promise<AgentEndpoint>): WorkspaceFiles {
  return {
    async readLandscapeFile(workspace, fileName) {
      const profile = profileOfFileName(fileName);
      if (profile === undefined || (profile !== null && !isProfileName(profile))) return { state: 'unreadable', reason: `${fileName} is not a landscape file name` };
      const endpoint = await endpointOfEditor(workspace).catch(() => undefined);
      if (!endpoint) return { state: 'unreadable', reason: 'the workspace is not running: on Kubernetes its files are read through its editor pod' };
      const result = await execCollect(endpoint, ['sh', '-c', READ_SCRIPT, 'read', `/data/app/${fileName}`, String(LANDSCAPE_FILE_LIMIT + 1)], LANDSCAPE_FILE_LIMIT + 1);
      return landscapeReadOf(result);
    },
  };
}

/** The read's answer from the script's exit code and output. Pure. */
export function landscapeReadOf(result: { exitCode: number | null; stdout: Buffer; stderr: string }): LandscapeFileRead {
  if (result.exitCode === 3) return { state: 'missing' };
  if (result.exitCode === 4) return { state: 'unreadable', reason: 'it is not a plain file (a directory or a symbolic link); svc reads only a plain file' };
  if (result.exitCode !== 0) return { state: 'unreadable', reason: result.stderr.trim() || 'the editor pod could not read it' };
  if (result.stdout.length > LANDSCAPE_FILE_LIMIT) return { state: 'unreadable', reason: `it is larger than 4 MiB; svc reads landscape files up to ${LANDSCAPE_FILE_LIMIT} bytes`, limitBytes: LANDSCAPE_FILE_LIMIT };
  const text = new TextDecoder('utf-8', { fatal: true });
  try {
    return { state: 'found', text: text.decode(result.stdout) };
  } catch {
    return { state: 'unreadable', reason: 'it is not UTF-8' };
  }
}
