// The workspaces of a team, live: state and status text follow the event stream (the list is read again on every
// workspace event of the team and after every `ready`). New workspace (from git or empty), and Recently deleted.
import { useState, type FormEvent } from 'react';
import { answer, idempotent, listAll, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { NEEDS_OWNER, labelOf, workspaceStates } from '../labels.ts';
import { rememberWorkspaces, useOperations } from '../operations.tsx';
import { Link, setQuery, useLocation } from '../router.tsx';
import type { SvcEvent, Team, WorkspacePlan } from '../types.ts';
import { Badge, Button, Empty, FieldHint, Loading, ProblemNotice, Section, Time } from '../ui.tsx';
import { DeletedButtons, WorkspaceButtons } from '../workspace-actions.tsx';
import { TransferOffers } from './OwnerTransfers.tsx';

const NAME_FORMAT = 'Use lowercase letters, digits and dashes, starting and ending with a letter or digit (for example shop-2).';

const concerns = (team: number | undefined) => (event: SvcEvent) => event.type.startsWith('workspace.') && event.team_id === team;

export function WorkspacesPage() {
  const teams = useResource(() => listAll((page) => svcApi.GET('/api/v1/teams', { params: { query: page } })), [], (e) => e.type.startsWith('team.'));
  const wanted = Number(useLocation().query.get('team')) || undefined;
  const team = teams.data?.find((t) => t.id === wanted) ?? teams.data?.[0];
  // without a team: whether an organization exists already decides what the hint asks for
  const orgs = useResource(() => listAll((page) => svcApi.GET('/api/v1/orgs', { params: { query: page } })), [], (e) => e.type.startsWith('org.'));

  if (teams.loading && !teams.data) return <Loading what="your teams" />;
  if (teams.error && !teams.data) return <ProblemNotice problem={teams.error} />;
  if (!team) {
    return (
      <>
        <h1>Workspaces</h1>
        <Empty>
          <p>Workspaces belong to a team, and you are in none yet.</p>
          <p>
            <Link to="/teams">{orgs.data?.length ? 'Create a team' : 'Create an organization and a team'}</Link>, or ask a team admin to add you.
          </p>
        </Empty>
      </>
    );
  }
  return (
    <>
      <div className="page-head">
        <h1>Workspaces</h1>
        {teams.data!.length > 1 && (
          <label className="team-picker">
            Team
            <select value={team.id} onChange={(e) => setQuery('team', e.target.value)}>
              {teams.data!.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <TransferOffers />
      <TeamWorkspaces key={team.id} team={team} />
    </>
  );
}

function TeamWorkspaces({ team }: { team: Team }) {
  const live = useResource(() => listAll((page) => svcApi.GET('/api/v1/workspaces', { params: { query: { team: team.id, ...page } } })).then((list) => (rememberWorkspaces(list), list)), [team.id], concerns(team.id));
  const deleted = useResource(() => listAll((page) => svcApi.GET('/api/v1/workspaces', { params: { query: { team: team.id, deleted: true, ...page } } })), [team.id], concerns(team.id));
  const [creating, setCreating] = useState(false);
  const [firstDismissed, setFirstDismissed] = useState(false);
  const mayCreate = team.permissions.includes('workspace.create');
  // A team without workspaces leads to its first one: the form is open from the start (one form, nothing before it).
  const first = mayCreate && !creating && !firstDismissed && live.data?.length === 0;

  return (
    <>
      <Section
        title={`${team.name}`}
        actions={
          mayCreate && !creating && (
            <Button variant="primary" onClick={() => setCreating(true)}>
              New workspace
            </Button>
          )
        }
      >
        {creating && <NewWorkspace team={team} onClose={() => setCreating(false)} />}
        {first && <NewWorkspace team={team} first onClose={() => setFirstDismissed(true)} />}
        <ProblemNotice problem={live.error} />
        {live.loading && !live.data ? (
          <Loading what="workspaces" />
        ) : live.data?.length === 0 ? (
          !first && <Empty>
            <p>No workspaces in {team.name} yet.</p>
            {mayCreate && !creating && <Button onClick={() => setCreating(true)}>Create the first one</Button>}
          </Empty>
        ) : (
          <table className="table workspaces" aria-label="Workspaces">
            <thead>
              <tr>
                <th>Name</th>
                <th>State</th>
                <th>Source</th>
                <th>Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {live.data?.map((ws) => (
                <tr key={ws.id} data-workspace={ws.name}>
                  <td>
                    <Link to={`/workspaces/${ws.id}`} className="strong">
                      {ws.name}
                    </Link>
                    {ws.needs_owner && (
                      <>
                        {' '}
                        <Badge label={NEEDS_OWNER} title="Its owner left the team; a team admin can offer it to a member" />
                      </>
                    )}
                  </td>
                  <td data-label="State">
                    <div className="state">
                      <Badge label={labelOf(workspaceStates, ws.state)} />
                      <span className="status-text clamp" title={ws.status_detail}>
                        {ws.status_detail}
                      </span>
                    </div>
                  </td>
                  <td className="source" data-label="Source">{ws.git ? <code title={ws.git.repo}>{shortRepo(ws.git.repo)}{ws.git.ref ? ` @ ${ws.git.ref}` : ''}</code> : <span className="muted">empty</span>}</td>
                  <td data-label="Created">
                    <Time at={ws.created_at} />
                  </td>
                  <td className="row-actions">
                    <WorkspaceButtons ws={ws} onChanged={() => void live.reload()} compact />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      {(deleted.data?.length ?? 0) > 0 && (
        <Section title="Recently deleted">
          <p className="muted">Deleted workspaces keep their files for 7 days; restore one, or purge it to free its storage now.</p>
          <table className="table" aria-label="Recently deleted">
            <thead>
              <tr>
                <th>Name</th>
                <th>Deleted</th>
                <th>Purged</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {deleted.data?.map((ws) => (
                <tr key={ws.id} data-workspace={ws.name}>
                  <td>{ws.name}</td>
                  <td>
                    <Time at={ws.deleted_at} />
                  </td>
                  <td>
                    <Time at={ws.purge_after} />
                  </td>
                  <td className="row-actions">
                    <DeletedButtons ws={ws} onChanged={() => void deleted.reload()} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
    </>
  );
}

/** `https://github.com/acme/shop.git` as `acme/shop`; local paths by their last two segments. */
function shortRepo(repo: string): string {
  const path = repo.replace(/^[a-z]+:\/\/[^/]+\//, '').replace(/^[^@]+@[^:]+:/, '').replace(/\.git$/, '');
  return path.split('/').filter(Boolean).slice(-2).join('/');
}

/** The provider named in the API from the repository's host: github, gitlab, bitbucket, else git. */
function providerOf(repo: string): string {
  const host = /^[a-z]+:\/\/(?:[^@/]+@)?([^/:]+)/.exec(repo)?.[1] ?? /^[^@]+@([^:]+):/.exec(repo)?.[1] ?? '';
  for (const provider of ['github', 'gitlab', 'bitbucket']) if (host.includes(provider)) return provider;
  return 'git';
}

function NewWorkspace({ team, onClose, first = false }: { team: Team; onClose: () => void; first?: boolean }) {
  const { track } = useOperations();
  const [name, setName] = useState('');
  const [source, setSource] = useState<'git' | 'empty'>('git');
  const [repo, setRepo] = useState('');
  const [ref, setRef] = useState('');
  // the installation's workspace plans (GET /plans): the default chosen, its storage proposed
  const plans = useResource(() => answer(svcApi.GET('/api/v1/plans', { params: { query: { kind: 'workspace' } } })).then((page) => page.items as WorkspacePlan[]), []);
  const [chosen, setPlan] = useState<string | undefined>();
  const plan = chosen ?? plans.data?.find((p) => p.default)?.id ?? 'standard';
  const [storageTyped, setStorage] = useState<string | undefined>();
  const storage = storageTyped ?? String(plans.data?.find((p) => p.id === plan)?.storage_gib ?? 10);
  const [idle, setIdle] = useState('30');
  const create = useAction(async () => {
    const git = source === 'git' ? { provider: providerOf(repo.trim()), repo: repo.trim(), ...(ref.trim() ? { ref: ref.trim() } : {}) } : undefined;
    const body = { team_id: team.id, name: name.trim(), plan, storage_gib: Number(storage), idle_timeout_minutes: Number(idle), ...(git ? { git } : {}) };
    track(await answer(svcApi.POST('/api/v1/workspaces', { body, headers: idempotent() })));
    onClose();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run();
  };
  return (
    <form className="panel stack" onSubmit={submit} aria-label="New workspace">
      <h3>{first ? `Create a workspace in ${team.name}` : `New workspace in ${team.name}`}</h3>
      {first && <p className="muted">No workspaces in {team.name} yet. Start from a git repository, or from nothing.</p>}
      <label>
        Name
        <input name="name" value={name} onChange={(e) => setName(e.target.value.toLowerCase())} required maxLength={63} pattern="[a-z0-9]([\-a-z0-9]*[a-z0-9])?" data-format={NAME_FORMAT} placeholder="shop" autoFocus />
        <span className="hint">Lowercase letters, digits and dashes; unique in the team.</span>
        <FieldHint problem={create.problem} pointer="/name" />
      </label>
      <fieldset className="choice">
        <legend>Start from</legend>
        <label>
          <input type="radio" name="source" checked={source === 'git'} onChange={() => setSource('git')} /> A git repository
        </label>
        <label>
          <input type="radio" name="source" checked={source === 'empty'} onChange={() => setSource('empty')} /> Nothing (an empty workspace)
        </label>
      </fieldset>
      {source === 'git' && (
        <div className="row">
          <label className="grow">
            Repository
            <input name="repo" value={repo} onChange={(e) => setRepo(e.target.value)} required placeholder="https://github.com/acme/shop.git" />
            <FieldHint problem={create.problem} pointer="/git/repo" />
          </label>
          <label>
            Branch, tag or commit
            <input name="ref" value={ref} onChange={(e) => setRef(e.target.value)} placeholder="default branch" />
            <FieldHint problem={create.problem} pointer="/git/ref" />
          </label>
        </div>
      )}
      <div className="row">
        <label>
          Plan
          <select name="plan" value={plan} onChange={(e) => (setPlan(e.target.value), setStorage(undefined))}>
            {(plans.data ?? [{ id: plan, title: plan, cpu_millis: 0, memory_mib: 0 }]).map((p) => (
              <option key={p.id} value={p.id}>
                {p.title}
                {p.cpu_millis > 0 ? ` — ${p.cpu_millis / 1000} CPU, ${p.memory_mib >= 1024 ? `${p.memory_mib / 1024} GiB` : `${p.memory_mib} MiB`}` : ''}
              </option>
            ))}
          </select>
          <FieldHint problem={create.problem} pointer="/plan" />
        </label>
        <label>
          Storage (GiB)
          <input name="storage" type="number" min={1} max={1024} step={1} value={storage} onChange={(e) => setStorage(e.target.value)} required />
          <span className="hint">Counts against the team's storage quota.</span>
          <FieldHint problem={create.problem} pointer="/storage_gib" />
        </label>
        <label>
          Sleeps after (minutes unused)
          <input name="idle" type="number" min={1} max={10080} step={1} value={idle} onChange={(e) => setIdle(e.target.value)} required />
          <span className="hint">1 minute to 7 days (10080).</span>
          <FieldHint problem={create.problem} pointer="/idle_timeout_minutes" />
        </label>
      </div>
      <ProblemNotice problem={create.problem} onDismiss={create.clear} />
      <div className="actions">
        <Button type="submit" variant="primary" busy={create.busy}>
          Create workspace
        </Button>
        <Button variant="quiet" onClick={onClose}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
