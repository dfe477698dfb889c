// The commands that drive a server through its public API, by name; each group's module loads when used.
import { processTerminal, runCommand, runGroup, type Command } from './command.ts';

type Loader = () => Promise<Command | Record<string, Command>>;

/** Every API command (a command or a group of them) by name, loaded when asked for. */
export const apiCommandLoaders: Record<string, Loader> = {
  login: async () => (await import('./login.ts')).loginCommand,
  logout: async () => (await import('./login.ts')).logoutCommand,
  whoami: async () => (await import('./login.ts')).whoamiCommand,
  ws: async () => (await import('./workspaces.ts')).workspaceCommands,
  sync: async () => (await import('./landscape.ts')).landscapeCommands.sync,
  teardown: async () => (await import('./landscape.ts')).landscapeCommands.teardown,
  landscape: async () => (await import('./landscape.ts')).landscapeCommands.landscape,
  stage: async () => (await import('./stages.ts')).stageCommands,
  logs: async () => (await import('./logs.ts')).logsCommand,
  service: async () => (await import('./services.ts')).serviceCommands,
  env: async () => (await import('./variables.ts')).envCommands,
  secret: async () => (await import('./variables.ts')).secretCommands,
  keys: async () => (await import('./keys.ts')).keyCommands,
  dotfiles: async () => (await import('./dotfiles.ts')).dotfilesCommands,
  registry: async () => (await import('./registry.ts')).registryCommands,
  'git-credentials': async () => (await import('./git-credentials.ts')).gitCredentialCommands,
  'ssh-key': async () => (await import('./git-credentials.ts')).sshKeyCommands,
  domains: async () => (await import('./domains.ts')).domainCommands,
  invite: async () => (await import('./people.ts')).inviteCommands,
  transfer: async () => (await import('./people.ts')).transferCommands,
  events: async () => (await import('./events.ts')).eventsCommand,
  managed: async () => (await import('./managed.ts')).managedCommands,
  egress: async () => (await import('./egress.ts')).egressCommand,
  ssh: async () => (await import('./shell.ts')).sshCommand,
  'config-ssh': async () => (await import('./ssh-endpoint.ts')).configSshCommand,
  exec: async () => (await import('./shell.ts')).execCommand,
  'port-forward': async () => (await import('./shell.ts')).portForwardCommand,
  conformance: async () => (await import('./conformance.ts')).conformanceCommand,
};

export const isCommand = (value: Command | Record<string, Command>): value is Command => typeof (value as Command).run === 'function';

export async function apiCommand(name: string, argv: string[], cwd: string): Promise<number> {
  const terminal = processTerminal(cwd);
  const loaded = await apiCommandLoaders[name]();
  return isCommand(loaded) ? runCommand(loaded, argv, terminal) : runGroup(name, loaded, argv, terminal);
}
