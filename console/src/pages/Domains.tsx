// A team's custom domains (docs/domains.md): listed with their verification status and certificate state, which
// move live on domain.updated; adding one shows the TXT record to create (with copy buttons); a domain's routes
// (path prefix → a workspace's dev URL, or one of its services and port) are edited and saved with If-Match.
import { useState, type FormEvent } from 'react';
import { answer, answerWithEtag, ifMatch, listAll, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { domainCertificate, domainVerification } from '../labels.ts';
import type { Domain, DomainRoute, SvcEvent, Team } from '../types.ts';
import { Badge, Button, ConfirmButton, CopyButton, Empty, FieldHint, Loading, ProblemNotice, Section, Time } from '../ui.tsx';

const aboutTeam = (team: Team) => (e: SvcEvent) => e.type === 'domain.updated' && e.team_id === team.id;

export function Domains({ team }: { team: Team }) {
  const manage = team.permissions.includes('team.update');
  const list = useResource(() => listAll((page) => svcApi.GET('/api/v1/teams/{team}/domains', { params: { path: { team: team.id }, query: page } })), [team.id], aboutTeam(team));
  const [open, setOpen] = useState<string>();

  return (
    <Section title="Custom domains">
      <p className="muted">Show the team's work under its own domain: create the TXT record shown for it, then point paths at workspaces.</p>
      <ProblemNotice problem={list.error} />
      {list.loading && !list.data ? (
        <Loading what="custom domains" />
      ) : list.data?.length === 0 ? (
        <Empty>No custom domains.</Empty>
      ) : (
        <table className="table" aria-label="Custom domains">
          <thead>
            <tr>
              <th>Domain</th>
              <th>Verification</th>
              <th>Certificate</th>
              <th>Routes</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.map((domain) => (
              <tr key={domain.id}>
                <td>
                  <button type="button" className="link" onClick={() => setOpen(open === domain.id ? undefined : domain.id)}>
                    {domain.name}
                  </button>
                  {domain.restricted && <span className="muted"> (restricted)</span>}
                </td>
                <td>
                  <Badge label={domainVerification[domain.verification.status]} title={domain.verification.detail} />
                </td>
                <td>
                  <Badge label={domainCertificate[domain.certificate.state]} title={domain.certificate.detail} />
                </td>
                <td>{domain.routes.length}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && list.data?.some((d) => d.id === open) && <DomainDetail key={open} team={team} id={open} manage={manage} onRemoved={() => setOpen(undefined)} />}
      {manage && <AddDomain team={team} onAdded={(domain) => setOpen(domain.id)} />}
    </Section>
  );
}

function AddDomain({ team, onAdded }: { team: Team; onAdded: (domain: Domain) => void }) {
  const [name, setName] = useState('');
  const [restricted, setRestricted] = useState(false);
  const add = useAction(async () => {
    const domain = await answer(svcApi.POST('/api/v1/teams/{team}/domains', { params: { path: { team: team.id } }, body: { name: name.trim(), restricted } }));
    setName('');
    setRestricted(false);
    onAdded(domain);
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void add.run();
  };
  return (
    <form className="inline-form compact" onSubmit={submit} aria-label="Add a domain">
      <label className="grow">
        Domain
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={254} placeholder="shop.example.com" />
        <FieldHint problem={add.problem} pointer="/name" />
      </label>
      <label className="toggle">
        <input type="checkbox" checked={restricted} onChange={(e) => setRestricted(e.target.checked)} /> Restricted (team sign-in)
      </label>
      <Button type="submit" busy={add.busy}>
        Add domain
      </Button>
      {add.problem && <ProblemNotice problem={add.problem} onDismiss={add.clear} />}
    </form>
  );
}

function DomainDetail({ team, id, manage, onRemoved }: { team: Team; id: string; manage: boolean; onRemoved: () => void }) {
  const path = { team: team.id, domain: id };
  const read = useResource(() => answerWithEtag(svcApi.GET('/api/v1/teams/{team}/domains/{domain}', { params: { path } })), [team.id, id], (e) => aboutTeam(team)(e) && e.domain_id === id);
  const check = useAction(() => answer(svcApi.POST('/api/v1/teams/{team}/domains/{domain}/check', { params: { path } })));
  const remove = useAction(async () => {
    await answer(svcApi.DELETE('/api/v1/teams/{team}/domains/{domain}', { params: { path, header: ifMatch(read.data?.etag) } }));
    onRemoved();
  });
  if (!read.data) return read.error ? <ProblemNotice problem={read.error} /> : <Loading what="the domain" />;
  const { value: domain, etag } = read.data;
  const v = domain.verification;
  return (
    <section className="panel" aria-label={`Domain ${domain.name}`}>
      <h3>{domain.name}</h3>
      <ProblemNotice problem={check.problem ?? remove.problem} onDismiss={() => (check.clear(), remove.clear())} />
      <p>Create this DNS record at your DNS provider:</p>
      <table className="table" aria-label="TXT record">
        <thead>
          <tr>
            <th>Name</th>
            <th>Type</th>
            <th>Value</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>
              <code>{domain.txt_record.name}</code> <CopyButton text={domain.txt_record.name} title="Copy the record name" variant="quiet" />
            </td>
            <td>TXT</td>
            <td>
              <code>{domain.txt_record.value}</code> <CopyButton text={domain.txt_record.value} title="Copy the record value" variant="quiet" />
            </td>
          </tr>
        </tbody>
      </table>
      <p>
        Verification: <Badge label={domainVerification[v.status]} /> {v.detail && <span className="muted">{v.detail}</span>}
        {v.checked_at && (
          <span className="muted">
            {' '}
            · checked <Time at={v.checked_at} />
          </span>
        )}
        {v.lapses_at && (
          <span className="muted">
            {' '}
            · record missing, lapses <Time at={v.lapses_at} />
          </span>
        )}
        {v.remove_at && (
          <span className="muted">
            {' '}
            · removed <Time at={v.remove_at} /> unless verified
          </span>
        )}
      </p>
      <p>
        Certificate: <Badge label={domainCertificate[domain.certificate.state]} /> {domain.certificate.detail && <span className="muted">{domain.certificate.detail}</span>}
      </p>
      {manage && (
        <div className="row">
          <Button variant="secondary" busy={check.busy} onClick={() => void check.run()}>
            Check the record now
          </Button>
          <ConfirmButton question={`Remove ${domain.name}? It stops serving at once.`} confirmText="Remove" busy={remove.busy} onConfirm={() => void remove.run()}>
            Remove domain
          </ConfirmButton>
        </div>
      )}
      <RoutesEditor team={team} id={id} etag={etag} routes={domain.routes} manage={manage} />
    </section>
  );
}

type RouteRow = { path: string; workspace_id: string; service: string; port: string; strip: boolean };
const rowOf = (r: DomainRoute): RouteRow => ({ path: r.path, workspace_id: String(r.workspace_id), service: r.service ?? '', port: r.port ? String(r.port) : '', strip: r.strip });
const routeOf = (r: RouteRow) => ({
  path: r.path.trim(),
  workspace_id: Number(r.workspace_id),
  ...(r.service.trim() && { service: r.service.trim() }),
  ...(r.port.trim() && { port: Number(r.port) }),
  strip: r.strip,
});

function RoutesEditor({ team, id, etag, routes, manage }: { team: Team; id: string; etag: string; routes: DomainRoute[]; manage: boolean }) {
  const [rows, setRows] = useState<RouteRow[]>(routes.map(rowOf));
  // The routes the edit started from: status changes (new ETags) keep the edit; a change of the routes themselves
  // by someone else stops the save until the person starts again from the new routes.
  const [base, setBase] = useState(JSON.stringify(routes));
  const changedMeanwhile = JSON.stringify(routes) !== base;
  const restart = () => {
    setRows(routes.map(rowOf));
    setBase(JSON.stringify(routes));
  };
  const workspaces = useResource(() => listAll((page) => svcApi.GET('/api/v1/workspaces', { params: { query: { team: team.id, ...page } } })), [team.id]);
  const save = useAction(async () => {
    const saved = await answer(svcApi.PATCH('/api/v1/teams/{team}/domains/{domain}', { params: { path: { team: team.id, domain: id }, header: ifMatch(etag) }, body: { routes: rows.map(routeOf) } }));
    setRows(saved.routes.map(rowOf));
    setBase(JSON.stringify(saved.routes));
  });
  const change = (index: number, patch: Partial<RouteRow>) => setRows(rows.map((r, i) => (i === index ? { ...r, ...patch } : r)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run();
  };
  return (
    <form onSubmit={submit} aria-label="Routes">
      <h4>Routes</h4>
      {rows.length === 0 && <Empty>No routes: the domain serves nothing yet.</Empty>}
      {rows.map((row, index) => (
        <div className="row" key={index} aria-label={`Route ${index + 1}`}>
          <label>
            Path
            <input value={row.path} onChange={(e) => change(index, { path: e.target.value })} required disabled={!manage} placeholder="/" />
            <FieldHint problem={save.problem} pointer={`/routes/${index}/path`} />
          </label>
          <label>
            Workspace
            <select value={row.workspace_id} onChange={(e) => change(index, { workspace_id: e.target.value })} required disabled={!manage}>
              <option value="">choose…</option>
              {workspaces.data?.map((w) => (
                <option key={w.id} value={String(w.id)}>
                  {w.name}
                </option>
              ))}
            </select>
            <FieldHint problem={save.problem} pointer={`/routes/${index}/workspace_id`} />
          </label>
          <label>
            Service (optional)
            <input value={row.service} onChange={(e) => change(index, { service: e.target.value })} disabled={!manage} placeholder="dev URL" />
            <FieldHint problem={save.problem} pointer={`/routes/${index}/service`} />
          </label>
          <label>
            Port
            <input value={row.port} onChange={(e) => change(index, { port: e.target.value })} disabled={!manage || !row.service} inputMode="numeric" size={6} />
            <FieldHint problem={save.problem} pointer={`/routes/${index}/port`} />
          </label>
          <label className="toggle">
            <input type="checkbox" checked={row.strip} onChange={(e) => change(index, { strip: e.target.checked })} disabled={!manage} /> Remove the prefix
          </label>
          {manage && (
            <Button variant="quiet" onClick={() => setRows(rows.filter((_, i) => i !== index))}>
              Remove route
            </Button>
          )}
        </div>
      ))}
      {changedMeanwhile && (
        <p className="notice" role="status">
          The routes were changed meanwhile. <Button variant="quiet" onClick={restart}>Start again from them</Button>
        </p>
      )}
      {manage && (
        <div className="row">
          <Button variant="secondary" onClick={() => setRows([...rows, { path: rows.length === 0 ? '/' : '', workspace_id: '', service: '', port: '', strip: false }])}>
            Add route
          </Button>
          <Button type="submit" busy={save.busy} disabled={changedMeanwhile}>
            Save routes
          </Button>
        </div>
      )}
      {save.problem && <ProblemNotice problem={save.problem} onDismiss={save.clear} />}
    </form>
  );
}
