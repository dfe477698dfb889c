// The workspaces' SSH endpoint on this machine (issue 38): `svc ssh --stdio WS` carries one SSH connection between
// stdin/stdout and the workspace (ssh's ProxyCommand), and `svc config-ssh` writes the ~/.ssh/config block and svc's
// known_hosts that make `ssh <workspace>.<team>.svc`, scp, rsync and the desktop editors use it.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Team, Workspace } from '../../sdk/src/index.ts';
import { parseSshHostName, sshLabel } from '../core/ssh-host.ts';
import type { Api } from './api.ts';
import type { Cli, Command } from './command.ts';
import { configDirectory } from './config.ts';
import { CliError, ExitCode } from './errors.ts';
import { knownHostsText, sshConfigBlock, withBlock, withoutBlock, type SshHostEntry } from './ssh-config-block.ts';
import { notFoundHere, resolveWorkspace } from './targets.ts';

/** A workspace by `<workspace>.<team>.svc` (the name ssh passes as %h), else as every command takes it. */
export async function sshWorkspace(cli: Cli, api: Api, reference: string): Promise<Workspace> {
  const named = parseSshHostName(reference);
  if (!named) return resolveWorkspace(cli, api, reference);
  const teams = await api.all((page) => api.client.GET('/api/v1/teams', { params: { query: page } }));
  for (const team of teams.filter((t) => sshLabel(t.name) === named.team)) {
    const workspaces = await api.all((page) => api.client.GET('/api/v1/workspaces', { params: { query: { team: team.id, ...page } } }));
    const found = workspaces.find((w) => sshLabel(w.name) === named.workspace);
    if (found) return found;
  }
  throw notFoundHere(`You reach no workspace ${reference}.`);
}

/** Pipes stdin and stdout through the workspace's SSH stream until either ends; 0, or why the stream was closed. */
export async function sshStdio(cli: Cli, reference: string): Promise<number> {
  const api = await cli.api();
  const workspace = await sshWorkspace(cli, api, reference);
  const socket = await api.openStream('/api/v1/workspaces/{ws}/ssh', { path: { ws: workspace.id } });
  const { createWebSocketStream } = await import('ws');
  const stream = createWebSocketStream(socket);
  let closed: { code: number; reason: string } | undefined;
  socket.once('close', (code, reason) => (closed = { code, reason: reason.toString() }));
  return new Promise((resolve) => {
    stream.on('error', () => undefined);
    process.stdin.pipe(stream);
    stream.pipe(process.stdout);
    stream.once('close', () => {
      process.stdin.unpipe(stream);
      process.stdin.destroy();
      if (closed && closed.code >= 4000) {
        cli.note(`svc: the SSH stream was closed: ${closed.reason}\n`);
        return resolve(closed.code === 4401 ? ExitCode.notSignedIn : ExitCode.problem);
      }
      resolve(0);
    });
  });
}

async function reachableHosts(api: Api): Promise<SshHostEntry[]> {
  const teams: Team[] = await api.all((page) => api.client.GET('/api/v1/teams', { params: { query: page } }));
  const hosts: SshHostEntry[] = [];
  for (const team of teams) {
    const workspaces = await api.all((page) => api.client.GET('/api/v1/workspaces', { params: { query: { team: team.id, ...page } } }));
    for (const workspace of workspaces) {
      const answer = await api.answer(api.client.GET('/api/v1/workspaces/{ws}/ssh-host', { params: { path: { ws: workspace.id } } }));
      hosts.push({ host: answer.host, user: answer.user, hostKey: answer.host_key });
    }
  }
  return hosts;
}

/** How ssh runs this svc: the same Node and script (or binary) as now. */
function proxyCommandOf(): string[] {
  const script = process.argv[1];
  return script && /\.m?js$/.test(script) ? [process.execPath, path.resolve(script)] : [process.execPath];
}

async function writeAtomically(file: string, text: string, mode: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const partial = `${file}.svc-${process.pid}`;
  await writeFile(partial, text, { mode });
  await rename(partial, file);
}

export const configSshCommand: Command = {
  usage: `svc config-ssh [--remove]
  Writes a block to ~/.ssh/config (between "# --- START SVC ---" and "# --- END SVC ---") with a Host
  <workspace>.<team>.svc for each workspace you reach and *.svc for newer ones, through svc ssh --stdio, and their host
  keys in svc's known_hosts. Then: ssh, scp, sftp, rsync, VS Code Remote-SSH and JetBrains Gateway. Run it again to
  update it; --remove takes the block out. The rest of the file stays as it is.`,
  options: { remove: { type: 'boolean' } },
  positionals: [0, 0],
  async run(cli) {
    const home = cli.env.HOME || os.homedir();
    const configFile = path.join(home, '.ssh', 'config');
    const knownHosts = path.join(configDirectory(cli.env), 'known_hosts');
    const current = await readFile(configFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw new CliError(`could not read ${configFile}: ${error.message}`, ExitCode.problem);
    });
    if (cli.args.flag('remove')) {
      const next = withoutBlock(current);
      if (next !== current) await writeAtomically(configFile, next, 0o600);
      if (cli.json) return cli.print({ config: configFile, removed: next !== current });
      cli.say(next !== current ? `Removed svc's hosts from ${configFile}.\n` : `${configFile} has no svc hosts.\n`);
      return;
    }
    const hosts = await reachableHosts(await cli.api());
    await writeAtomically(knownHosts, knownHostsText(hosts), 0o600);
    await writeAtomically(configFile, withBlock(current, sshConfigBlock(hosts, proxyCommandOf(), knownHosts)), 0o600);
    if (cli.json) return cli.print({ config: configFile, known_hosts: knownHosts, hosts: hosts.map((h) => ({ host: h.host, user: h.user })) });
    cli.say(`Wrote ${hosts.length} workspace${hosts.length === 1 ? '' : 's'} to ${configFile}:\n${hosts.map((h) => `  ssh ${h.host}\n`).join('')}`);
  },
};
