// Organizations, their teams, and a team's members with their roles (docs/permissions.md).
import { useState, type FormEvent } from 'react';
import { answer, listAll, svcApi } from '../api.ts';
import { useMe } from '../App.tsx';
import { useAction, useResource } from '../hooks.ts';
import { setQuery, useLocation } from '../router.tsx';
import type { Org, Team, User } from '../types.ts';
import { Invitations } from './Invitations.tsx';
import { Domains } from './Domains.tsx';
import { RegistryCredentials } from './RegistryCredentials.tsx';
import { TeamNetwork } from './TeamNetwork.tsx';
import { Button, ConfirmButton, Empty, FieldHint, Loading, ProblemNotice, Section } from '../ui.tsx';

const TEAM_ROLES = ['admin', 'developer', 'viewer'];
const isOrgEvent = (type: string) => type.startsWith('org.') || type.startsWith('team.');

export function TeamsPage() {
  const orgs = useResource(() => listAll((page) => svcApi.GET('/api/v1/orgs', { params: { query: page } })), [], (e) => isOrgEvent(e.type));
  const teams = useResource(() => listAll((page) => svcApi.GET('/api/v1/teams', { params: { query: page } })), [], (e) => isOrgEvent(e.type));
  const selectedId = Number(useLocation().query.get('team')) || undefined;
  const selected = teams.data?.find((t) => t.id === selectedId) ?? teams.data?.[0];
  const orgName = (id: string) => orgs.data?.find((o) => o.id === id)?.name ?? 'another organization';

  return (
    <>
      <h1>Teams</h1>
      <Organizations orgs={orgs.data} loading={orgs.loading} onCreated={() => void orgs.reload()} />
      <Section title="Teams" actions={orgs.data && <NewTeam orgs={orgs.data} onCreated={(team) => {
            setQuery('team', String(team.id));
            void teams.reload();
          }} />}>
        <ProblemNotice problem={teams.error ?? orgs.error} />
        {teams.loading && !teams.data ? (
          <Loading what="teams" />
        ) : teams.data?.length === 0 ? (
          <Empty>
            <p>
              {orgs.data?.length
                ? `No teams yet in ${orgs.data.length === 1 ? orgs.data[0].name : 'your organizations'}. Workspaces belong to a team: name one above and choose Create team.`
                : 'No teams yet. Workspaces belong to a team: create an organization, then a team in it.'}
            </p>
          </Empty>
        ) : (
          <table className="table selectable" aria-label="Teams">
            <thead>
              <tr>
                <th>Team</th>
                <th>Organization</th>
                <th>Your role</th>
              </tr>
            </thead>
            <tbody>
              {teams.data?.map((team) => (
                <tr key={team.id} className={team.id === selected?.id ? 'selected' : undefined} onClick={() => setQuery('team', String(team.id))}>
                  <td>
                    <button type="button" className="link" onClick={() => setQuery('team', String(team.id))}>
                      {team.name}
                    </button>
                  </td>
                  <td>{orgName(team.org_id)}</td>
                  <td>{team.role ?? (team.permissions.includes('team.members.manage') ? 'admin (through the organization)' : '—')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      {selected && <Members key={selected.id} team={selected} />}
      {selected && teams.data && <Invitations key={`invitations-${selected.id}`} team={selected} org={orgs.data?.find((o) => o.id === selected.org_id)} teams={teams.data} />}
      {selected && <RegistryCredentials key={`registries-${selected.id}`} team={selected} />}
      {selected && <Domains key={`domains-${selected.id}`} team={selected} />}
      {selected && <TeamNetwork key={`network-${selected.id}`} team={selected} />}
    </>
  );
}

/** The organizations one belongs to (or, for administrators, every one), and a form to create one. */
function Organizations({ orgs, loading, onCreated }: { orgs?: Org[]; loading: boolean; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Org>();
  const create = useAction(async () => {
    const org = await answer(svcApi.POST('/api/v1/orgs', { body: { name: name.trim() } }));
    setName('');
    setCreated(org);
    onCreated();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated(undefined);
    void create.run();
  };
  return (
    <Section title="Organizations">
      {loading && !orgs ? (
        <Loading what="organizations" />
      ) : orgs?.length === 0 ? (
        <Empty>No organizations yet. An organization holds teams; create the first one below.</Empty>
      ) : (
        <table className="table" aria-label="Organizations">
          <thead>
            <tr>
              <th>Organization</th>
              <th>Your role</th>
            </tr>
          </thead>
          <tbody>
            {orgs?.map((org) => (
              <tr key={org.id} data-org={org.name} className={org.id === created?.id ? 'selected' : undefined}>
                <td data-label="Organization">{org.name}</td>
                <td data-label="Your role">{org.role ?? (org.permissions.includes('org.update') ? 'owner (as administrator)' : '—')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form className="inline-form" onSubmit={submit} aria-label="New organization">
        <label>
          New organization
          <input name="org-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} placeholder="Acme" />
          <FieldHint problem={create.problem} pointer="/name" />
        </label>
        <Button type="submit" busy={create.busy}>
          Create organization
        </Button>
      </form>
      <ProblemNotice problem={create.problem} onDismiss={create.clear} />
      {created && (
        <p className="success" role="status">
          Organization “{created.name}” created. Create a team in it under Teams.
        </p>
      )}
    </Section>
  );
}

function NewTeam({ orgs, onCreated }: { orgs: Org[]; onCreated: (team: Team) => void }) {
  const owned = orgs.filter((o) => o.permissions.includes('team.create'));
  const [org, setOrg] = useState('');
  const [name, setName] = useState('');
  const create = useAction(async () => {
    const team = await answer(svcApi.POST('/api/v1/teams', { body: { org_id: org || owned[0]?.id, name: name.trim() } }));
    setName('');
    onCreated(team);
  });
  if (owned.length === 0) return null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run();
  };
  return (
    <form className="inline-form compact" onSubmit={submit} aria-label="New team">
      {owned.length > 1 && (
        <select value={org || owned[0].id} onChange={(e) => setOrg(e.target.value)} aria-label="Organization">
          {owned.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      )}
      <input name="team-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} placeholder="New team name" aria-label="Team name" />
      <Button type="submit" variant="primary" busy={create.busy}>
        Create team
      </Button>
      {create.problem && <ProblemNotice problem={create.problem} onDismiss={create.clear} />}
    </form>
  );
}

function Members({ team }: { team: Team }) {
  const me = useMe();
  const manage = team.permissions.includes('team.members.manage');
  const members = useResource(() => listAll((page) => svcApi.GET('/api/v1/teams/{team}/members', { params: { path: { team: team.id }, query: page } })), [team.id], (e) => e.type === 'members.updated' && e.team_id === team.id);
  const candidates = useResource(
    async (): Promise<User[]> => {
      if (!manage) return [];
      if (me.permissions.includes('platform.admin')) return listAll((page) => svcApi.GET('/api/v1/users', { params: { query: page } }));
      return (await listAll((page) => svcApi.GET('/api/v1/orgs/{org}/members', { params: { path: { org: team.org_id }, query: page } }))).map((m) => ({ id: m.user_id, email: m.email, name: m.name }));
    },
    [team.id, manage],
  );
  const [adding, setAdding] = useState('');
  const [role, setRole] = useState('developer');
  const change = useAction(async (user: number, newRole: string | null) => {
    if (newRole) await answer(svcApi.PUT('/api/v1/teams/{team}/members/{user}', { params: { path: { team: team.id, user } }, body: { role: newRole as 'admin' | 'developer' | 'viewer' } }));
    else await answer(svcApi.DELETE('/api/v1/teams/{team}/members/{user}', { params: { path: { team: team.id, user } } }));
    await members.reload();
  });
  const others = (candidates.data ?? []).filter((u) => !members.data?.some((m) => m.user_id === u.id));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const user = Number(adding || others[0]?.id);
    if (user) void change.run(user, role).then((ok) => ok && setAdding(''));
  };

  return (
    <Section title={`Members of ${team.name}`}>
      <ProblemNotice problem={change.problem ?? members.error} onDismiss={change.clear} />
      {members.loading && !members.data ? (
        <Loading what="members" />
      ) : (
        <table className="table" aria-label="Members">
          <thead>
            <tr>
              <th>Name</th>
              <th>E-mail</th>
              <th>Role</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {members.data?.map((member) => (
              <tr key={member.user_id}>
                <td>{member.name}</td>
                <td>{member.email}</td>
                <td>
                  {manage ? (
                    <select value={member.role} aria-label={`Role of ${member.name}`} onChange={(e) => void change.run(member.user_id, e.target.value)}>
                      {TEAM_ROLES.map((r) => (
                        <option key={r}>{r}</option>
                      ))}
                    </select>
                  ) : (
                    member.role
                  )}
                </td>
                <td className="row-actions">
                  {(manage || member.user_id === me.id) && (
                    <ConfirmButton question={member.user_id === me.id ? `Leave ${team.name}?` : `Remove ${member.name} from ${team.name}?`} confirmText={member.user_id === me.id ? 'Leave' : 'Remove'} onConfirm={() => void change.run(member.user_id, null)}>
                      {member.user_id === me.id ? 'Leave' : 'Remove'}
                    </ConfirmButton>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {manage && others.length > 0 && (
        <form className="inline-form" onSubmit={submit} aria-label="Add a member">
          <label>
            Person
            <select value={adding || others[0].id} onChange={(e) => setAdding(e.target.value)}>
              {others.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name} ({u.email})
                </option>
              ))}
            </select>
          </label>
          <label>
            Role
            <select value={role} onChange={(e) => setRole(e.target.value)}>
              {TEAM_ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </label>
          <Button type="submit" busy={change.busy}>
            Add member
          </Button>
        </form>
      )}
    </Section>
  );
}
