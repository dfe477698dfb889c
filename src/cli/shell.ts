// `svc ssh`, `svc exec` and `svc port-forward`: a shell or a command in the workspace's editor pod (or a service's
// replica), and TCP ports of the workspace on this machine, each over an authenticated WebSocket of the API.
import type { Workspace } from '../../sdk/src/index.ts';
import type { Cli, Command } from './command.ts';
import { usageError } from './errors.ts';
import { forwardPorts, parseForwardSpec } from './port-forward.ts';
import { runRemoteCommand, terminalSize } from './remote-command.ts';
import { resolveWorkspace, selectedWorkspace, teamOptions } from './targets.ts';

const podOptions = {
  ...teamOptions,
  ws: { type: 'string' as const },
  service: { type: 'string' as const },
  replica: { type: 'string' as const },
};

async function workspaceOf(cli: Cli, reference: string | undefined): Promise<Workspace> {
  const api = await cli.api();
  return reference === undefined ? selectedWorkspace(cli, api) : resolveWorkspace(cli, api, reference);
}

/** service and replica as the API takes them; --replica alone is a usage error. */
function podQuery(cli: Cli): { service?: string; replica?: number } {
  const service = cli.args.string('service');
  const replica = cli.args.integer('replica', 0, 99);
  if (replica !== undefined && service === undefined) throw usageError('--replica needs --service');
  return { service, replica };
}

async function execute(cli: Cli, workspace: Workspace, pod: { service?: string; replica?: number }, io: { command: string[]; tty: boolean; stdin: boolean }): Promise<number> {
  const api = await cli.api();
  const size = io.tty ? terminalSize(process.stdout) : undefined;
  const query = { ...pod, command: io.command, tty: io.tty || undefined, stdin: io.stdin || undefined, cols: size?.cols, rows: size?.rows };
  const socket = await api.openStream('/api/v1/workspaces/{ws}/exec', { path: { ws: workspace.id }, query });
  return runRemoteCommand(socket, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, sendStdin: io.stdin, tty: io.tty });
}

export const sshCommand: Command = {
  usage: `svc ssh [WS] [--service S [--replica N]]
svc ssh --stdio WS|<workspace>.<team>.svc
  An interactive shell in the workspace (WS, else --ws or SVC_WORKSPACE): a terminal in /data/app as the workspace
  user with its variables; --service opens it in a replica of that service. Exits with the shell's exit status.
  --stdio carries an SSH connection to the workspace on stdin and stdout: ssh's ProxyCommand (svc config-ssh).`,
  options: { ...podOptions, stdio: { type: 'boolean' } },
  positionals: [0, 1],
  async run(cli) {
    if (cli.args.flag('stdio')) {
      const reference = cli.args.positionals[0];
      if (reference === undefined) throw usageError('--stdio needs the workspace (WS or <workspace>.<team>.svc)');
      return (await import('./ssh-endpoint.ts')).sshStdio(cli, reference);
    }
    const workspace = await workspaceOf(cli, cli.args.positionals[0]);
    return execute(cli, workspace, podQuery(cli), { command: [], tty: true, stdin: true });
  },
};

export const execCommand: Command = {
  usage: `svc exec WS [--service S [--replica N]] [-i] [-t] -- COMMAND [ARG...]
  Runs a command in /data/app of the workspace (through a login shell, with the workspace's variables); its stdout
  and stderr stay apart and svc exits with its exit status. -i sends standard input; -t gives it a terminal.`,
  options: { ...podOptions, stdin: { type: 'boolean', short: 'i' }, tty: { type: 'boolean', short: 't' } },
  positionals: [2, 100_000],
  async run(cli) {
    const [reference, ...command] = cli.args.positionals;
    const workspace = await workspaceOf(cli, reference);
    return execute(cli, workspace, podQuery(cli), { command, tty: cli.args.flag('tty'), stdin: cli.args.flag('stdin') });
  },
};

export const portForwardCommand: Command = {
  usage: `svc port-forward WS [SERVICE:]PORT[:LOCAL]... [--address A] [--replica N]
  Carries TCP connections from LOCAL (default: PORT; 0 picks a free one) on this machine (127.0.0.1 unless
  --address) to PORT in the workspace's editor pod, or of SERVICE (a replica, or a managed service such as a
  database). Runs until interrupted (Ctrl-C).`,
  options: { ...teamOptions, address: { type: 'string' }, replica: { type: 'string' } },
  positionals: [2, 20],
  async run(cli) {
    const [reference, ...specs] = cli.args.positionals;
    const forwards = specs.map(parseForwardSpec);
    const workspace = await workspaceOf(cli, reference);
    return forwardPorts(cli, workspace, forwards, { address: cli.args.string('address') ?? '127.0.0.1', replica: cli.args.integer('replica', 0, 99) });
  },
};

