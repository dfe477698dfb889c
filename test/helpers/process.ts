// Runs `svc` as a real process and reads what it prints.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCliBuilt } from '../../scripts/build-cli.mjs';

export const svcBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/svc.js');
/** The Node flags of bin/svc.js's `#!/usr/bin/env -S node ...` line: a test runs svc as the installed command does. */
export const svcNodeFlags = /^#!\/usr\/bin\/env -S node(.*)$/m.exec(readFileSync(svcBin, 'utf8').split('\n', 1)[0])?.[1].split(' ').filter(Boolean) ?? [];

// The prebuilt CLI that svcBin runs, built once here when missing or older than a source (bin/svc.js would too,
// but then every test's first processes would build it side by side).
await ensureCliBuilt();

export interface SvcProcess {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first match of `pattern` in stdout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

export function startSvc(args: string[], env: Record<string, string | undefined> = {}, options: { cwd?: string } = {}): SvcProcess {
  return watchSvc(spawn(process.execPath, [...svcNodeFlags, svcBin, ...args], { env: { SVC_VOLUME_BACKEND: 'directory', ...process.env, ...env }, cwd: options.cwd }));
}

/** Reads what an `svc` process started some other way prints. */
export function watchSvc(child: ChildProcessWithoutNullStreams): SvcProcess {
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (chunk) => {
    out += chunk;
    waiters.forEach((w) => w());
  });
  child.stderr.on('data', (chunk) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => {
    waiters.forEach((w) => w());
    resolve(code);
  }));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} in output:\n${out}\n${err}`)), timeoutMs);
        const check = () => {
          const match = out.match(pattern);
          if (match) {
            clearTimeout(timer);
            resolve(match);
          } else if (child.exitCode !== null) {
            clearTimeout(timer);
            reject(new Error(`svc exited with ${child.exitCode} before ${pattern}:\n${out}\n${err}`));
          }
        };
        waiters.push(check);
        check();
      });
    },
  };
}

export async function runSvc(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: { cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startSvc(args, env, options);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** Stops a server the way an operator does (SIGTERM, so it stops its nginx too); SIGKILL after 15 s. */
export async function stopSvc(svc: SvcProcess | undefined): Promise<void> {
  if (!svc || svc.child.exitCode !== null || svc.child.signalCode !== null) return;
  svc.child.kill('SIGTERM');
  const timer = setTimeout(() => svc.child.kill('SIGKILL'), 15_000);
  await svc.exited;
  clearTimeout(timer);
}
