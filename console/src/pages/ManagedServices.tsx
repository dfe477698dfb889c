// The managed services of a workspace in its landscape view (spec 3.4): each instance's provider and version, plan,
// status and the details its provider publishes (last known when it does not answer), its last nightly backup (a
// failed one shown as a failure with the reason), with Pause and Resume for
// those who may sync and Show password for those who manage the workspace's secrets (each reveal audited); the
// recently deleted below (tombstones kept 7 days). Re-read on managed_service.updated.
import { useState } from 'react';
import { answer, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { labelOf, managedStatuses } from '../labels.ts';
import { useOperations } from '../operations.tsx';
import type { ManagedService, ManagedServiceCredentials, Workspace } from '../types.ts';
import { Badge, Button, ConfirmButton, ProblemNotice, Time } from '../ui.tsx';

const DAY_MS = 24 * 3600_000;

export function ManagedServices({ ws, mayChange }: { ws: Workspace; mayChange: boolean }) {
  const list = (deleted: boolean) => answer(svcApi.GET('/api/v1/teams/{team}/managed-services', { params: { path: { team: ws.team_id }, query: { workspace: ws.id, deleted, limit: 200 } } }));
  const instances = useResource(
    async () => {
      const [live, deleted] = await Promise.all([list(false), list(true)]);
      return { live: live.items, deleted: deleted.items };
    },
    [ws.id, ws.team_id],
    (e) => e.type === 'managed_service.updated' && e.workspace_id === ws.id,
  );
  const { track } = useOperations();
  const maySeeSecrets = ws.permissions?.includes('variables.manage') ?? false;
  const [revealed, setRevealed] = useState<Record<string, ManagedServiceCredentials>>({});
  const reveal = useAction(async (instance: ManagedService) => {
    const credentials = await answer(svcApi.POST('/api/v1/managed-services/{ms}/reveal', { params: { path: { ms: instance.id } } }));
    setRevealed((shown) => ({ ...shown, [instance.id]: credentials }));
  });
  const act = useAction(async (instance: ManagedService, action: 'pause' | 'resume') => track(await answer(svcApi.POST(`/api/v1/managed-services/{ms}/${action}`, { params: { path: { ms: instance.id } } }))));
  const data = instances.data;
  if (!data || (data.live.length === 0 && data.deleted.length === 0)) return <ProblemNotice problem={instances.error} />;
  return (
    <>
      <h3>Managed services</h3>
      <ProblemNotice problem={instances.error ?? act.problem ?? reveal.problem} onDismiss={() => (act.clear(), reveal.clear())} />
      <table className="table managed-services" aria-label="Managed services">
        <thead>
          <tr>
            <th>Service</th>
            <th>Status</th>
            <th>Details</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {data.live.map((instance) => (
            <tr key={instance.id} data-managed-service={instance.name} data-status={instance.status}>
              <td>
                <strong>{instance.name}</strong>{' '}
                <span className="muted small">
                  {instance.provider} {instance.version} · {instance.plan}
                </span>
              </td>
              <td>
                <Badge label={labelOf(managedStatuses, instance.status)} title={`since ${new Date(instance.updated_at).toLocaleString()}`} />
              </td>
              <td>
                <Details instance={instance} />
                {revealed[instance.id] && <Credentials credentials={revealed[instance.id]} onHide={() => setRevealed(({ [instance.id]: _, ...rest }) => rest)} />}
                <LastBackup instance={instance} />
              </td>
              <td className="row-actions">
                {maySeeSecrets && !revealed[instance.id] && (
                  <Button variant="quiet" onClick={() => void reveal.run(instance)} busy={reveal.busy}>
                    Show password
                  </Button>
                )}
                {mayChange && ['synchronized', 'unknown', 'invalid-provider'].includes(instance.status) && (
                  <ConfirmButton question={`Pause ${instance.name}? Its server stops; its data stays.`} confirmText="Pause" onConfirm={() => void act.run(instance, 'pause')} busy={act.busy}>
                    Pause
                  </ConfirmButton>
                )}
                {mayChange && ['paused', 'unknown'].includes(instance.status) && (
                  <Button variant="quiet" onClick={() => void act.run(instance, 'resume')} busy={act.busy}>
                    Resume
                  </Button>
                )}
              </td>
            </tr>
          ))}
          {data.deleted.map((instance) => (
            <tr key={instance.id} className="muted" data-managed-service={instance.name} data-status="deleted">
              <td>
                <strong>{instance.name}</strong>{' '}
                <span className="small">
                  {instance.provider} {instance.version}
                </span>
              </td>
              <td>
                <Badge label={labelOf(managedStatuses, 'deleted')} />
              </td>
              <td className="small" colSpan={2}>
                Deleted <Time at={instance.deleted_at} /> with its data; listed until <Time at={new Date(Date.parse(instance.deleted_at!) + 7 * DAY_MS).toISOString()} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function Details({ instance }: { instance: ManagedService }) {
  const { reason, ...details } = instance.details;
  const entries = Object.entries(details);
  return (
    <div className="managed-details">
      {reason !== undefined && <div className="status-text">{String(reason)}</div>}
      {entries.length > 0 ? (
        <dl className="inline-details">
          {entries.map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd>
                <code>{String(value)}</code>
              </dd>
            </div>
          ))}
        </dl>
      ) : (
        <span className="muted">—</span>
      )}
      {instance.status === 'unknown' && entries.length > 0 && <div className="muted small">last known</div>}
    </div>
  );
}

/** A revealed password and connection URL, until hidden again. */
function Credentials({ credentials, onHide }: { credentials: ManagedServiceCredentials; onHide: () => void }) {
  return (
    <div className="managed-credentials" aria-label={`Credentials of ${credentials.name}`}>
      <dl className="inline-details">
        <div>
          <dt>password</dt>
          <dd>
            <code data-secret="password">{credentials.password}</code>
          </dd>
        </div>
        <div>
          <dt>url</dt>
          <dd>
            <code data-secret="url">{credentials.url}</code>
          </dd>
        </div>
      </dl>
      <Button variant="quiet" onClick={onHide}>
        Hide
      </Button>
    </div>
  );
}

/** The last nightly backup: when it was made, or that it failed, when and why. */
function LastBackup({ instance }: { instance: ManagedService }) {
  const backup = instance.backup;
  if (!backup) return null;
  if (backup.state === 'succeeded') {
    return (
      <div className="muted small" data-backup="succeeded">
        Last nightly backup <Time at={backup.at} />
      </div>
    );
  }
  return (
    <div className="backup-failed small" role="status" data-backup="failed">
      Nightly backup failed <Time at={backup.at} />: {backup.reason}
    </div>
  );
}
