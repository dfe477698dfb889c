// The landscape of a workspace (3.7): the banner state, the dev URL, each service's status, replicas, ports and
// routes (their URLs, to open or copy), its run switch and log, its managed services, and Plan (a diff of what a
// Sync would do) → Sync with that plan's hash, and Teardown.
import { useState } from 'react';
import { answer, idempotent, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { bannerStates, devUrlStates, errorPlace, labelOf, serviceStatuses, shortDigest } from '../labels.ts';
import { LogView } from '../LogView.tsx';
import { useOperations } from '../operations.tsx';
import type { Plan, Service, Workspace } from '../types.ts';
import { Badge, Button, ConfirmButton, CopyButton, Empty, Loading, ProblemNotice, Section, Time } from '../ui.tsx';
import { openAddress } from '../workspace-actions.tsx';
import { ManagedServices } from './ManagedServices.tsx';
import { PlanView } from './PlanView.tsx';

export function LandscapeTab({ ws }: { ws: Workspace }) {
  const [profile, setProfile] = useState('');
  const [profileInput, setProfileInput] = useState('');
  const query = profile ? { profile } : {};
  const landscape = useResource(
    () => answer(svcApi.GET('/api/v1/workspaces/{ws}/landscape', { params: { path: { ws: ws.id }, query } })),
    [ws.id, profile],
    (e) => e.workspace_id === ws.id && (e.type === 'landscape.updated' || e.type === 'workspace.updated'),
  );
  const [plan, setPlan] = useState<Plan>();
  const [logsOf, setLogsOf] = useState<{ service: string; replica: number }>();
  const { track } = useOperations();
  const mayChange = ws.permissions?.includes('landscape.sync') ?? false;

  const planning = useAction(async () => setPlan(await answer(svcApi.GET('/api/v1/workspaces/{ws}/landscape/plan', { params: { path: { ws: ws.id }, query } }))));
  const teardown = useAction(async () => track(await answer(svcApi.POST('/api/v1/workspaces/{ws}/landscape/teardown', { params: { path: { ws: ws.id } }, headers: idempotent() }))));
  const openDev = useAction(() => openAddress(ws, 'dev'));

  const data = landscape.data;
  if (landscape.loading && !data) return <Loading what="the landscape" />;
  const banner = data && labelOf(bannerStates, data.banner.state);
  const dev = data && labelOf(devUrlStates, data.dev_url.state);

  return (
    <>
      <Section
        title="Landscape"
        actions={
          mayChange && (
            <>
              <Button variant="primary" onClick={() => void planning.run()} busy={planning.busy}>
                Plan
              </Button>
              {data && data.services.length > 0 && data.banner.state !== 'torn-down' && (
                <ConfirmButton question="Tear down? Every service stops; code, variables and secrets stay." confirmText="Teardown" onConfirm={() => void teardown.run()} busy={teardown.busy}>
                  Teardown
                </ConfirmButton>
              )}
            </>
          )
        }
      >
        <form
          className="inline-form compact profile"
          onSubmit={(e) => {
            e.preventDefault();
            setProfile(profileInput.trim());
            setPlan(undefined);
          }}
        >
          <label>
            Profile
            <input value={profileInput} onChange={(e) => setProfileInput(e.target.value)} placeholder="none (svc.yml)" maxLength={64} />
          </label>
          <Button type="submit" variant="quiet">
            Use
          </Button>
        </form>
        <ProblemNotice problem={landscape.error ?? planning.problem ?? teardown.problem} onDismiss={planning.problem ? planning.clear : teardown.clear} />
        {data && banner && (
          <div className={`banner tone-${banner.tone}`} data-testid="banner" data-state={data.banner.state}>
            <div>
              <strong>{banner.text}</strong>
              {data.banner.detail && data.banner.detail !== banner.text && <span> — {data.banner.detail}</span>}
              {data.services.length > 0 && data.banner.state !== 'torn-down' && <ServicesHealth services={data.services} />}
            </div>
            {data.synced_at && (
              <span className="muted small">
                Last Sync <Time at={data.synced_at} />
                {data.profile ? ` from profile ${data.profile}` : ''}
              </span>
            )}
            {data.banner.errors && data.banner.errors.length > 0 && (
              <ul className="file-errors">
                {data.banner.errors.map((error, index) => (
                  <li key={index}>
                    <span className="place">{errorPlace(error)}</span>: {error.message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        {plan && (
          <PlanView
            ws={ws}
            plan={plan}
            profile={profile}
            onReplan={() => void planning.run()}
            onSynced={(operation) => {
              track(operation);
              setPlan(undefined);
            }}
            onClose={() => setPlan(undefined)}
          />
        )}
        {data && dev && (
          <div className="dev-url">
            <span>Dev URL</span>
            <code>{data.dev_url.url}</code>
            <Badge label={dev} title={data.dev_url.detail} />
            {data.dev_url.detail && data.dev_url.detail !== dev.text && <span className="muted small">{data.dev_url.detail}</span>}
            <Button variant="quiet" onClick={() => void openDev.run()}>
              Open
            </Button>
          </div>
        )}
        <ProblemNotice problem={openDev.problem} onDismiss={openDev.clear} />
        {data && data.services.length === 0 ? (
          <Empty>No services run yet. Plan shows what a Sync of the file would start.</Empty>
        ) : (
          data && <Services ws={ws} services={data.services} mayChange={mayChange} onLogs={(service) => setLogsOf({ service, replica: 0 })} />
        )}
        <ManagedServices ws={ws} mayChange={mayChange} />
      </Section>
      {logsOf && data && (
        <ServiceLogs ws={ws} service={data.services.find((s) => s.name === logsOf.service)} selected={logsOf} onSelect={setLogsOf} onClose={() => setLogsOf(undefined)} />
      )}
    </>
  );
}

function Services({ ws, services, mayChange, onLogs }: { ws: Workspace; services: Service[]; mayChange: boolean; onLogs: (service: string) => void }) {
  const toggle = useAction((service: string, action: 'start' | 'stop') => answer(svcApi.POST(`/api/v1/workspaces/{ws}/landscape/services/{service}/${action}`, { params: { path: { ws: ws.id, service } } })));
  return (
    <>
      <ProblemNotice problem={toggle.problem} onDismiss={toggle.clear} />
      <table className="table services" aria-label="Services">
        <thead>
          <tr>
            <th>Service</th>
            <th>Status</th>
            <th>Replicas</th>
            <th>Ports and routes</th>
            <th>Run switch</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {services.map((service) => (
            <tr key={service.name} data-service={service.name}>
              <td>
                <strong>{service.name}</strong> <span className="muted small">{service.type}</span>
                {service.image && (
                  <div className="muted small" data-service-image title={`${service.image.reference}@${service.image.digest}`}>
                    {service.image.reference} <code>{shortDigest(service.image.digest)}</code>
                  </div>
                )}
              </td>
              <td data-label="Status">
                <div className="state">
                  <Badge label={labelOf(serviceStatuses, service.status)} />
                  {service.detail && <span className="status-text">{service.detail}</span>}
                </div>
              </td>
              <td data-label="Replicas">
                {service.replicas.desired > 0 ? (
                  <span title="ready of desired">
                    {service.replicas.ready} / {service.replicas.desired}
                  </span>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td className="ports" data-label="Ports and routes">
                <ServicePorts service={service} />
              </td>
              <td data-label="Run switch">
                {service.type === 'managed' ? (
                  <span className="muted small" title="Teardown pauses a managed service and the next Sync resumes it">
                    none: runs while synced
                  </span>
                ) : (
                  <span className={service.running ? 'switch on' : 'switch off'}>{service.running ? 'On' : 'Off'}</span>
                )}
                {mayChange && service.type !== 'managed' && (
                  <Button variant="quiet" onClick={() => void toggle.run(service.name, service.running ? 'stop' : 'start')}>
                    {service.running ? 'Stop' : 'Start'}
                  </Button>
                )}
              </td>
              <td className="row-actions">
                {(service.type === 'steps' || service.type === 'container') && (
                  <Button variant="quiet" onClick={() => onLogs(service.name)}>
                    Logs
                  </Button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** Each port: its routes on the dev URL and its public address, with copy buttons; internal ports as `:3000`. */
function ServicePorts({ service }: { service: Service }) {
  const ports = service.ports ?? [];
  if (ports.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="addresses" aria-label={`Addresses of ${service.name}`}>
      {ports.map((port) => (
        <li key={port.port}>
          {port.port > 0 && <code className="muted">:{port.port}</code>}
          {port.routes.length === 0 && !port.public_url && <span className="muted small">inside the workspace only</span>}
          {port.routes.map((route) => (
            <span key={route.path} className="address">
              <a href={route.url} target="_blank" rel="noreferrer" title={route.strip ? `${route.path} is stripped before the service sees the request` : undefined}>
                {route.url}
              </a>
              <CopyButton text={route.url} title={`Copy ${route.url}`} variant="quiet" />
            </span>
          ))}
          {port.public_url && (
            <span className="address">
              <span className="badge tone-neutral">public</span>
              <a href={port.public_url} target="_blank" rel="noreferrer">
                {port.public_url}
              </a>
              <CopyButton text={port.public_url} title={`Copy ${port.public_url}`} variant="quiet" />
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * The banner describes the file against the last Sync; beside it, how the services fare, so a green "In sync" never
 * stands alone above a failed service: failed ones named (in red), else those still starting, else that all run.
 */
function ServicesHealth({ services }: { services: Service[] }) {
  const failed = services.filter((s) => s.status === 'failure').map((s) => s.name);
  const starting = services.filter((s) => s.status === 'starting' || s.status === 'pending').map((s) => s.name);
  const [tone, text] =
    failed.length > 0
      ? ['bad', `${failed.length === 1 ? 'Service' : 'Services'} failed: ${failed.join(', ')}`]
      : starting.length > 0
        ? ['busy', `Starting: ${starting.join(', ')}`]
        : ['good', services.every((s) => s.status === 'running' || s.status === 'internal') ? (services.length === 1 ? 'Its service runs' : `All ${services.length} services run`) : 'No service failed'];
  return (
    <span className={`services-health health-${tone}`} data-testid="services-health" data-health={tone}>
      {' · '}
      {text}
    </span>
  );
}

/** Why following a service's log ended: it failed or finished (no more lines come until it is started again). */
function followEnd(service: Service | undefined): string | undefined {
  if (service?.status === 'failure') return `${service.name} failed${service.detail ? ` (${service.detail})` : ''}`;
  if (service?.status === 'finished') return `${service.name} finished`;
  return undefined;
}

function ServiceLogs({ ws, service, selected, onSelect, onClose }: { ws: Workspace; service?: Service; selected: { service: string; replica: number }; onSelect: (s: { service: string; replica: number }) => void; onClose: () => void }) {
  const replicas = Math.max(1, service?.replicas.desired ?? 1);
  return (
    <Section
      title={`Log of ${selected.service}`}
      actions={
        replicas > 1 && (
          <label className="inline">
            Replica
            <select value={selected.replica} onChange={(e) => onSelect({ ...selected, replica: Number(e.target.value) })}>
              {Array.from({ length: replicas }, (_, i) => (
                <option key={i} value={i}>
                  {i}
                </option>
              ))}
            </select>
          </label>
        )
      }
    >
      <LogView
        key={`${selected.service}/${selected.replica}`}
        source={{ kind: 'service', ws: ws.id, service: selected.service, replica: selected.replica }}
        title={`${selected.service}, replica ${selected.replica}`}
        endedBecause={followEnd(service)}
        onClose={onClose}
      />
    </Section>
  );
}
