// The nginx processes svc runs, seen from outside: what answers on their ports, their workers, and ending a
// process group with every worker it left behind.
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';

/** A GET on host:port: status and body, or undefined when nothing answers within a second. */
function get(host: string, port: number, target: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const request = http.get({ host, port, path: target, agent: false, timeout: 1000, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}

/** Whether something answers HTTP on host:port (any status). */
export const answers = async (host: string, port: number) => (await get(host, port, '/', { host: 'svc-probe.invalid' })) !== undefined;

/** What nginx answers on its control port (the generation its workers run; forgetting admissions), or undefined. */
export async function controlAnswer(port: number, what: '/generation' | '/forget'): Promise<string | undefined> {
  const answer = await get('127.0.0.1', port, what);
  return answer?.status === 200 ? answer.body : undefined;
}

/** The pids of a process's children (nginx's workers and cache processes); empty when /proc cannot tell. */
export async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(/\s+/).filter(Boolean).map(Number);
}

/** Whether an nginx process still takes new requests: alive and not told to quit (its title says so when it is). */
export async function accepting(pid: number): Promise<boolean> {
  const title = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return title !== undefined && title !== '' && !title.includes('shutting down');
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const exitedAlready = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** The nginx processes of a process group (a master svc started and the workers it forked, even orphaned ones). */
async function nginxGroup(pgid: number): Promise<number[]> {
  const found: number[] = [];
  for (const name of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so count from its closing parenthesis.
    const group = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    if (group !== pgid) continue;
    if ((await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')).startsWith('nginx:')) found.push(Number(name));
  }
  return found;
}

/** Kills what is left of an nginx process group and waits (up to 5 s) until it is gone and its sockets are free. */
export async function endGroup(pgid: number): Promise<void> {
  const deadline = Date.now() + 5000;
  for (let left = await nginxGroup(pgid); left.length > 0 && Date.now() < deadline; left = await nginxGroup(pgid)) {
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await pause(10);
  }
}

/** The last lines of nginx's error log (what it says when its workers do not come up), or nothing. */
export async function errorLogTail(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trim().split('\n').slice(-3).join('\n');
}
