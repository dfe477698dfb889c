// How to reach a workspace with SSH (issue 38): `GET /workspaces/{ws}/ssh-host` answers its name for ssh
// (`<workspace>.<team>.svc`), the workspace user to log in as and its host key (made at the first ask), which
// `svc config-ssh` writes into svc's known_hosts and the console shows as a one-line command.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../core/problems.ts';
import { sshHostName } from '../../core/ssh-host.ts';
import { podUserOf } from '../../runtime/workspace-user.ts';
import { findTeam } from '../../store/teams.ts';
import { workspaceSshPublicKey } from '../../workspaces/ssh-host-key.ts';
import type { ApiDeps } from '../context.ts';
import { Id } from '../schemas.ts';
import { workspaceAccess } from './workspaces.ts';

const SshHostSchema = Type.Object({
  host: Type.String({ description: 'the name ssh, scp and the desktop editors take (`<workspace>.<team>.svc`), after svc config-ssh' }),
  user: Type.String({ description: 'the workspace user, the only login the endpoint takes' }),
  host_key: Type.String({ description: 'the workspace host key as known_hosts lists it (`ssh-ed25519 AAAA…`)' }),
  command: Type.String({ description: 'the one-line command to connect' }),
  vscode_url: Type.String({ description: 'opens the workspace in VS Code Remote-SSH' }),
});

export function registerWorkspaceSshHostRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/workspaces/:ws/ssh-host',
    {
      config: { access: 'user' },
      schema: {
        summary: "The workspace's SSH name, user and host key (svc config-ssh)",
        tags: ['workspaces'],
        params: Type.Object({ ws: Id }),
        response: { 200: SshHostSchema },
      },
    },
    async (request) => {
      const { row } = await workspaceAccess(deps, request);
      const team = await findTeam(deps.pool, row.team_id);
      if (!team) throw notFound('workspace');
      const host = sshHostName(row.name, team.name);
      const hostKey = await workspaceSshPublicKey(deps.pool, deps.secrets, row.id, deps.clock.now());
      return {
        host,
        user: podUserOf(row.owner_email, row.owner_name).login,
        host_key: hostKey,
        command: `ssh ${host}`,
        vscode_url: `vscode://vscode-remote/ssh-remote+${host}/data/app`,
      };
    },
  );
}
