// The plan of a Sync as a diff: each service to create (+), change (~, with the fields and the environment
// variables whose value changes, and whether it restarts), replace (±) or remove (−), the prepare and test steps,
// and what stays; then each container service's image with the digest Sync will run. Sync sends this plan's hash, so it applies exactly what was shown (409 plan-changed when the
// file or a variable moved on: plan again).
import { answer, idempotent, svcApi } from '../api.ts';
import { useAction } from '../hooks.ts';
import { planActions, shortDigest } from '../labels.ts';
import type { Operation, Plan, PlanService, Workspace } from '../types.ts';
import { Button, ProblemNotice } from '../ui.tsx';

/** `/services/web/steps/0/run` as `steps › #1 › run` (the service is the row already; list items count from 1). */
function fieldOf(pointer: string, prefix: string, whole: string): string {
  const rest = pointer.startsWith(prefix) ? pointer.slice(prefix.length) : pointer;
  const parts = rest.split('/').filter(Boolean).map((part) => (/^\d+$/.test(part) ? `#${Number(part) + 1}` : part.replace(/~1/g, '/').replace(/~0/g, '~')));
  return parts.join(' › ') || whole;
}

/** The pointers of what the file changes; environment variables whose value changes are named once, apart. */
function fileChanges(service: PlanService): string[] {
  const named = new Set((service.environment ?? []).map((name) => `/services/${service.name}/env/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`));
  return service.changes.filter((pointer) => !named.has(pointer));
}

export function PlanView({ ws, plan, profile, onSynced, onReplan, onClose }: { ws: Workspace; plan: Plan; profile: string; onSynced: (operation: Operation) => void; onReplan: () => void; onClose: () => void }) {
  const sync = useAction(async () => {
    const body = { plan_hash: plan.hash, ...(profile ? { profile } : {}) };
    onSynced(await answer(svcApi.POST('/api/v1/workspaces/{ws}/landscape/sync', { params: { path: { ws: ws.id } }, body, headers: idempotent() })));
  });
  const stages = (['prepare', 'test'] as const).filter((stage) => plan[stage].changed);
  const missing = plan.missing_secrets ?? [];

  return (
    <div className="plan" aria-label="Plan">
      <div className="plan-head">
        <h3>Plan{plan.profile ? ` for profile ${plan.profile}` : ''}</h3>
        <span className="muted small" title={plan.hash}>
          plan {plan.hash.slice(0, 12)}
        </span>
      </div>
      {!plan.changed && <p className="muted">Nothing changes: the landscape runs as the file describes it. A Sync starts it again as it is.</p>}
      <ul className="diff">
        {plan.services.map((service) => {
          const action = planActions[service.action] ?? { sign: '?', text: service.action };
          return (
            <li key={service.name} className={`diff-${service.action}`} data-plan-service={service.name}>
              <span className="sign" aria-hidden="true">
                {action.sign}
              </span>
              <strong>{service.name}</strong> <span className="muted">{service.type}</span> <span className="action">{action.text}</span>
              {service.action === 'replace' && service.previousType && <span className="muted"> (was {service.previousType})</span>}
              {service.action === 'change' && service.restarts && <span className="muted"> (restarts{service.reason ? `: ${service.reason}` : ''})</span>}
              {service.action === 'change' && service.changes.length > 0 && (
                <ul>
                  {fileChanges(service).map((pointer) => (
                    <li key={pointer}>{fieldOf(pointer, `/services/${service.name}`, 'all of it')}</li>
                  ))}
                  {(service.environment ?? []).length > 0 && <li data-plan-environment>environment {service.environment!.join(', ')} changed</li>}
                </ul>
              )}
            </li>
          );
        })}
        {stages.map((stage) => (
          <li key={stage} className="diff-change">
            <span className="sign" aria-hidden="true">
              ~
            </span>
            <strong>{stage}</strong> <span className="muted">steps</span> <span className="action">change</span>
            <ul>
              {plan[stage].changes.map((pointer) => (
                <li key={pointer}>{fieldOf(pointer, `/${stage}`, 'the list of steps')}</li>
              ))}
            </ul>
          </li>
        ))}
        {plan.unchanged.map((name) => (
          <li key={name} className="diff-same">
            <span className="sign" aria-hidden="true">
              =
            </span>
            {name} <span className="muted">unchanged</span>
          </li>
        ))}
      </ul>
      {(plan.images ?? []).length > 0 && (
        <ul className="plan-images" aria-label="Images">
          {plan.images!.map((image) => (
            <li key={image.service} data-plan-image={image.service}>
              <strong>{image.service}</strong> <span className="muted">image</span> {image.image} →{' '}
              {image.digest ? (
                <code title={image.digest}>{shortDigest(image.digest)}</code>
              ) : (
                <span className="field-error">cannot be resolved: {image.problem?.detail ?? image.problem?.title}</span>
              )}
              {image.digest && image.deployed_digest && image.deployed_digest !== image.digest && (
                <span className="muted">
                  {' '}
                  (runs <code title={image.deployed_digest}>{shortDigest(image.deployed_digest)}</code> now)
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      {missing.length > 0 && (
        <div className="notice" role="status" aria-label="Secrets without a value" data-plan-missing-secrets>
          <p>
            {missing.length === 1 ? 'A secret the file uses has no value' : 'Secrets the file uses have no value'}: set{' '}
            {missing.length === 1 ? 'it' : 'them'} under Variables &amp; secrets, then plan again. Sync is refused until then.
          </p>
          <ul>
            {missing.map((secret) => (
              <li key={secret.name} data-missing-secret={secret.name}>
                <code>{secret.name}</code>{' '}
                <span className="muted small">{secret.uses.map((use) => (use.line !== undefined ? `line ${use.line}` : use.pointer)).join(', ')}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
      <ProblemNotice problem={sync.problem} onDismiss={sync.clear} />
      <div className="actions">
        <Button variant="primary" onClick={() => void sync.run()} busy={sync.busy} disabled={missing.length > 0} title={missing.length > 0 ? 'Set the missing secrets first' : undefined}>
          Sync
        </Button>
        {(missing.length > 0 || sync.problem?.type === 'urn:svc:problem:plan-changed') && <Button onClick={onReplan}>Plan again</Button>}
        <Button variant="quiet" onClick={onClose}>
          Close
        </Button>
      </div>
    </div>
  );
}
