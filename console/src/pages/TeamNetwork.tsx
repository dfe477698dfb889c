// A team's network setting (docs/runtime.md, "The pod network"): whether its workspaces' pods reach the internet
// (egress on, under the installation's policy) or nothing outside their workspace (off). Team admins switch it; it
// applies at once to the pods the team's workspaces have.
import { answer, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import type { Team } from '../types.ts';
import { Button, Loading, ProblemNotice, Section } from '../ui.tsx';

export function TeamNetwork({ team }: { team: Team }) {
  const settings = useResource(() => answer(svcApi.GET('/api/v1/teams/{team}/network-settings', { params: { path: { team: team.id } } })), [team.id], (e) => e.type === 'team.updated' && e.team_id === team.id);
  const change = useAction(async (egress: 'on' | 'off') => {
    await answer(svcApi.PUT('/api/v1/teams/{team}/network-settings', { params: { path: { team: team.id } }, body: { egress } }));
    await settings.reload();
  });
  const egress = settings.data?.egress;
  const other = egress === 'off' ? 'on' : 'off';
  return (
    <Section title={`Network of ${team.name}`}>
      <ProblemNotice problem={change.problem ?? settings.error} onDismiss={change.clear} />
      {!settings.data ? (
        <Loading what="the network setting" />
      ) : (
        <p aria-label="Egress">
          {egress === 'on'
            ? "Egress on: the team's pods reach the internet (npm, pip, git), under the installation's egress policy. "
            : "Egress off: the team's pods reach nothing outside their own workspace. "}
          {team.permissions.includes('team.update') && (
            <Button onClick={() => void change.run(other)} busy={change.busy}>
              Turn egress {other}
            </Button>
          )}
        </p>
      )}
    </Section>
  );
}
