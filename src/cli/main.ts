// `svc`: one entry point, one module per command group.
import { didYouMean } from '../core/suggest.ts';
import { SERVER_VERSION } from '../core/version.ts';

const usage = `svc ${SERVER_VERSION}: development workspaces

Usage:
  svc login [URL] [--token KEY]            sign in (through the browser, or with an API key); svc logout, svc whoami
  svc ws list|create|show|rename|sleep|wake|stop|start|delete|restore|purge|archive|open
                                           workspaces (svc ws --help lists the commands)
  svc sync [--ws WS] [--profile P] [--yes] show the plan of svc.yml, confirm, apply it
  svc teardown | svc landscape             stop every service | the landscape and its services
  svc stage run|show|stop prepare|test|run stages and their runs
  svc logs SERVICE [-f] [--replica N] [--tail N]
                                           a replica's log, each line after its time
  svc service start|stop NAME              the run switch of a service
  svc env|secret set|list|rm               variables and secrets of a workspace
  svc managed list|show|pause|resume       managed services (databases) of a team or workspace
  svc ssh [WS] [--service S]               a shell in the workspace (or in a replica of a service)
  svc config-ssh [--remove]                ssh, scp, rsync and desktop editors: <workspace>.<team>.svc in ~/.ssh/config
  svc exec WS [-i] [-t] -- COMMAND...      run a command there; exits with its exit status
  svc port-forward WS [SERVICE:]PORT[:LOCAL]
                                           carry local TCP connections to a port in the workspace
  svc keys list|rm                         your API keys
  svc dotfiles set URL|show|unset          your dotfiles repository, applied in HOME of workspaces you own
  svc registry add|list|remove             container registry credentials of a team
  svc git-credentials add|list|rm          your git credentials per host (HTTPS tokens)
  svc ssh-key show|rotate                  your SSH key for git hosts
  svc domains list|add|show|remove         custom domains of a team: the TXT record to create, status, routes
  svc invite create|list|revoke|renew      invitations of an organization by e-mail
  svc transfer offer|list|accept|decline|cancel
                                           ownership transfers of workspaces
  svc events [--team T]                    follow the live events
  svc lint [FILE] [--profile P] [--json]   check a svc.yml file offline
  svc init [DIR] [--force]                 write a svc.yml from the repository's devcontainer, compose file,
                                           Procfile, .gitpod.yml or package.json
  svc conformance URL [--token KEY]        check an installation against the specification's rules
  svc images build [--push REGISTRY/PREFIX]
                                           the Kubernetes driver's images, built offline (and pushed)
  svc server [options]                     run the platform (svc server --help for options)
  svc admin sign-in-link [--user EMAIL] [--mail] [--data-dir DIR]
                                           print (or mail) a one-time sign-in link (on the server's machine)
  svc version                              print the version

Every command takes --json (machine-readable output) and --help. Workspace commands of a landscape take
--ws ID|NAME or SVC_WORKSPACE; names are looked up in --team (or SVC_TEAM, or your only team).
Exit status: 0 ok, 1 a problem from the server, 2 usage, 3 not signed in, 4 the server could not be reached;
svc ssh and svc exec exit with the remote command's status once it ran.
`;

export const commandNames = ['login', 'logout', 'whoami', 'ws', 'sync', 'teardown', 'landscape', 'stage', 'logs', 'service', 'env', 'secret', 'managed',
  'ssh', 'config-ssh', 'exec', 'port-forward', 'keys', 'dotfiles', 'registry', 'git-credentials', 'ssh-key', 'domains', 'invite', 'transfer', 'events', 'lint', 'init', 'conformance', 'images', 'server', 'admin', 'version', 'help'];

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const io = {
    stdout: (text: string) => process.stdout.write(text),
    stderr: (text: string) => process.stderr.write(text),
    cwd: process.cwd(),
  };
  switch (command) {
    case 'server':
      return (await import('./server.ts')).serverCommand(rest, io);
    case 'admin':
      return (await import('./admin.ts')).adminCommand(rest, io);
    case 'lint':
      return (await import('./lint.ts')).lintCommand(rest, io);
    case 'init':
      return (await import('./init.ts')).initCommand(rest, io);
    case 'images':
      return (await import('./images.ts')).imagesCommand(rest, io);
    case 'login':
    case 'logout':
    case 'whoami':
    case 'sync':
    case 'teardown':
    case 'landscape':
    case 'logs':
    case 'service':
    case 'events':
    case 'ws':
    case 'stage':
    case 'env':
    case 'secret':
    case 'keys':
    case 'dotfiles':
    case 'managed':
    case 'registry':
    case 'git-credentials':
    case 'ssh-key':
    case 'domains':
    case 'invite':
    case 'transfer':
    case 'ssh':
    case 'config-ssh':
    case 'exec':
    case 'port-forward':
    case 'conformance':
      return (await import('./commands.ts')).apiCommand(command, rest, io.cwd);
    case 'version':
    case '--version':
      io.stdout(`${SERVER_VERSION}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.stdout(usage);
      return 0;
    default:
      io.stderr(`svc: unknown command "${command}".${didYouMean(command, commandNames)}\n\n${usage}`);
      return 2;
  }
}

export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
