// `svc service start|stop NAME`: the run switch of one service of the landscape (spec 3.2). Start turns it on and
// starts the service with the services it needs; stop turns it off and stops every replica, and a stopped service
// never starts on a request. Both answer at once with the service as it is then.
import type { Command } from './command.ts';
import type { ServiceView } from './landscape.ts';
import { label, selectedWorkspace, workspaceOptions } from './targets.ts';

/** `web: starting, 0/1 ready; its run switch is on.` */
export function formatSwitched(service: ServiceView): string {
  const detail = service.detail ? ` (${service.detail})` : '';
  const ready = service.replicas.desired > 0 ? `, ${service.replicas.ready}/${service.replicas.desired} ready` : '';
  return `${service.name}: ${service.status}${detail}${ready}; its run switch is ${service.running ? 'on' : 'off'}.\n`;
}

function switchCommand(action: 'start' | 'stop'): Command {
  return {
    usage:
      action === 'start'
        ? 'svc service start NAME [--ws WS] [--json]\n  Turns the run switch of a service on and starts it, with the services it needs.'
        : 'svc service stop NAME [--ws WS] [--json]\n  Turns the run switch of a service off and stops every replica; requests do not start it again.',
    options: workspaceOptions,
    positionals: [1, 1],
    async run(cli) {
      const api = await cli.api();
      const workspace = await selectedWorkspace(cli, api);
      const name = cli.args.positionals[0];
      const service = await api.answer(api.client.POST(`/api/v1/workspaces/{ws}/landscape/services/{service}/${action}`, { params: { path: { ws: workspace.id, service: name } } }));
      if (cli.json) return cli.print(service);
      cli.say(`${action === 'start' ? 'Started' : 'Stopped'} ${name} in ${label(workspace)}.\n${formatSwitched(service)}`);
    },
  };
}

export const serviceCommands: Record<string, Command> = {
  start: switchCommand('start'),
  stop: switchCommand('stop'),
};
