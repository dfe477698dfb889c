// The managed services' connection values (src/managed/connection-env.ts) as a file in the editor pod's memory, for
// the shells the server does not start itself: code-server's terminals read it (their `sh` through `$ENV`, which the
// agent sets for the editor; a bash profile may source it too). `/tmp` of the editor pod is its own tmpfs, so the
// passwords never reach a disk and the file goes with the pod. Rewritten after each Sync and Teardown and at each
// start of the editor pod; shells opened afterwards have the new values (docs/managed.md, "Where developers work").
import type pg from 'pg';
import { ExecChannel, frame, parseFrame, readExecStatus } from '../core/channel-protocol.ts';
import type { SecretBox } from '../core/secret-box.ts';
import { managedShellEnv } from '../managed/connection-values.ts';
import { shellQuote } from '../agent/shell.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { workspaceRef } from './operations.ts';

export { MANAGED_ENV_FILE } from '../agent/managed-env-file.ts';
import { MANAGED_ENV_FILE } from '../agent/managed-env-file.ts';

/** `export NAME='value'` lines, sorted, that any POSIX shell sources. */
export function renderManagedEnvFile(env: Record<string, string>): string {
  const lines = Object.keys(env).sort().map((name) => `export ${name}=${shellQuote(env[name])}`);
  return ['# The managed services of this workspace, as its last Sync gave them (written by svc; do not edit)', ...lines, ''].join('\n');
}

// written aside, then renamed, so a shell never reads half of it; only the workspace's UID may read it
const WRITE_SCRIPT = `umask 077 && mkdir -p /tmp/svc && cat > /tmp/svc/.managed-services.env.new && mv -f /tmp/svc/.managed-services.env.new ${MANAGED_ENV_FILE}`;

/** Writes `text` to the file through an exec stream of the editor pod; rejects with the reason when it cannot. */
export async function writeEditorFile(driver: RuntimeDriver, row: WorkspaceRow, text: string): Promise<void> {
  const socket = await driver.openExec(workspaceRef(row), { kind: 'editor' }, { command: ['sh', '-c', WRITE_SCRIPT], tty: false, stdin: true, env: {} });
  await new Promise<void>((resolve, reject) => {
    const settle = (error?: Error) => {
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      if (socket.readyState === socket.OPEN) socket.close(1000);
      if (error) reject(error);
      else resolve();
    };
    let stderr = '';
    socket.on('message', (message: Buffer) => {
      const parsed = parseFrame(message);
      if (parsed?.channel === ExecChannel.stderr) stderr += parsed.data.toString();
      if (parsed?.channel !== ExecChannel.status) return;
      const status = readExecStatus(parsed.data);
      if ('error' in status) return settle(new Error(status.error));
      settle(status.exitCode === 0 ? undefined : new Error(`exit ${status.exitCode}: ${stderr.trim()}`));
    });
    socket.once('close', () => settle(new Error('the stream closed before the command ended')));
    socket.once('error', (error: Error) => settle(error));
    socket.resume();
    socket.send(frame(ExecChannel.stdin, text));
    socket.send(frame(ExecChannel.close, Buffer.from([ExecChannel.stdin])));
  });
}

/**
 * Rewrites the editor pod's file from the deployed landscape; a failure is logged, never thrown. `newPod`: the pod
 * just started (its /tmp is empty), so a workspace without managed services needs no file and no exec.
 */
export async function refreshManagedShellFile(
  deps: { pool: pg.Pool; secrets: SecretBox; driver: RuntimeDriver; log?: (message: string) => void },
  row: WorkspaceRow,
  options: { newPod?: boolean } = {},
): Promise<void> {
  if (row.state !== 'running') return;
  try {
    const env = await managedShellEnv(deps.pool, deps.secrets, row.id);
    if (options.newPod && Object.keys(env).length === 0) return;
    await writeEditorFile(deps.driver, row, renderManagedEnvFile(env));
  } catch (error) {
    deps.log?.(`the managed services' values of workspace ${row.id} were not written to its editor pod: ${(error as Error).message}`);
  }
}
