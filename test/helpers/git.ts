// Local git repositories for clone tests: real `git`, no network. A bare one, and the repository with a work tree
// it was pushed from.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface BareRepository {
  /** Path of the bare repository (clone it as `file://<path>` or the path itself). */
  path: string;
  url: string;
  /** The non-bare repository the branches were committed in and pushed from (its work tree shows `main`). */
  workPath: string;
  /** The commit at the tip of each branch. */
  commits: Record<string, string>;
  remove(): Promise<void>;
}

/**
 * A bare repository whose default branch `main` holds `files`; `branches` add more branches. `head` points its HEAD
 * at another branch, which need not exist (a bare repository made with `master` as default, then pushed `main`).
 */
export async function createBareRepository(
  files: Record<string, string>,
  branches: Record<string, Record<string, string>> = {},
  options: { head?: string } = {},
): Promise<BareRepository> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'svc-git-'));
  await run('chmod', ['755', root]);
  const bare = path.join(root, 'repo.git');
  const work = path.join(root, 'work');
  const git = (cwd: string, ...args: string[]) =>
    run('git', ['-c', 'user.email=test@example.com', '-c', 'user.name=Test', '-c', 'init.defaultBranch=main', ...args], { cwd });
  await git(root, 'init', '--bare', bare);
  await git(root, 'init', work);
  const commit = async (content: Record<string, string>, message: string) => {
    for (const [name, text] of Object.entries(content)) {
      await mkdir(path.dirname(path.join(work, name)), { recursive: true });
      await writeFile(path.join(work, name), text);
    }
    await git(work, 'add', '-A');
    await git(work, 'commit', '-m', message);
  };
  const tip = async () => (await git(work, 'rev-parse', 'HEAD')).stdout.trim();
  await commit(files, 'initial');
  await git(work, 'push', bare, 'main');
  const commits: Record<string, string> = { main: await tip() };
  for (const [branch, content] of Object.entries(branches)) {
    await git(work, 'checkout', '-b', branch);
    await commit(content, branch);
    await git(work, 'push', bare, branch);
    commits[branch] = await tip();
    await git(work, 'checkout', 'main');
  }
  if (options.head) await git(bare, 'symbolic-ref', 'HEAD', `refs/heads/${options.head}`);
  await run('chmod', ['-R', 'a+rX', root]);
  return { path: bare, url: `file://${bare}`, workPath: work, commits, remove: () => rm(root, { recursive: true, force: true }) };
}

export interface ServedRepository {
  /** `http://<host>:<port>/repo.git`: a remote URL, which an installation clones without allowing local paths. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves a bare repository over git's "dumb" HTTP protocol (its files as they are, after `git update-server-info`),
 * for a server that only clones remote URLs, as a default installation does.
 */
export async function serveOverHttp(repository: BareRepository, host = '127.0.0.1'): Promise<ServedRepository> {
  await run('git', ['update-server-info'], { cwd: repository.path });
  const root = path.resolve(repository.path);
  const server = http.createServer(async (request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    const file = path.resolve(root, `.${pathname.replace(/^\/repo\.git/, '')}`);
    if (request.method !== 'GET' || !pathname.startsWith('/repo.git/') || !file.startsWith(`${root}${path.sep}`)) {
      response.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/repo.git`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
