// Ownership of a workspace (spec 2.3 owner_id, docs/people.md "Owner transfers"): who owns it, whether it needs an
// owner, and its transfers: the owner or a team admin offers it to a team member, that person accepts or declines,
// the offerer cancels. Everything follows owner_transfers.updated live.
import { useState, type FormEvent } from 'react';
import { answer, listAll, svcApi } from '../api.ts';
import { useMe } from '../App.tsx';
import { useAction, useResource } from '../hooks.ts';
import { NEEDS_OWNER } from '../labels.ts';
import { Link } from '../router.tsx';
import type { Member, OwnerTransfer, SvcEvent, Workspace } from '../types.ts';
import { Badge, Button, ConfirmButton, Loading, ProblemNotice, Section, Time } from '../ui.tsx';

const transfersChanged = (e: SvcEvent) => e.type === 'owner_transfers.updated';

/** Accept, decline or cancel a transfer; the caller re-reads what it shows on success. */
function useTransferAction(done: () => Promise<void>) {
  return useAction(async (transfer: OwnerTransfer, action: 'accept' | 'decline' | 'cancel') => {
    await answer(svcApi.POST(`/api/v1/owner-transfers/{id}/${action}`, { params: { path: { id: transfer.id } } }));
    await done();
  });
}

/** The owner of one workspace, a "needs an owner" notice, its open transfer and the form to offer it. */
export function WorkspaceOwnership({ ws, onChanged }: { ws: Workspace; onChanged: () => void }) {
  const me = useMe();
  const team = useResource(() => answer(svcApi.GET('/api/v1/teams/{team}', { params: { path: { team: ws.team_id } } })), [ws.team_id], (e) => e.type.startsWith('team.') || (e.type === 'members.updated' && e.team_id === ws.team_id));
  const members = useResource(() => listAll((page) => svcApi.GET('/api/v1/teams/{team}/members', { params: { path: { team: ws.team_id }, query: page } })), [ws.team_id], (e) => e.type === 'members.updated' && e.team_id === ws.team_id);
  const transfers = useResource(() => listAll((page) => svcApi.GET('/api/v1/workspaces/{ws}/owner-transfers', { params: { path: { ws: ws.id }, query: { state: 'open', ...page } } })), [ws.id], (e) => transfersChanged(e) && e.workspace_id === ws.id);
  const act = useTransferAction(async () => {
    await transfers.reload();
    onChanged();
  });
  const manages = team.data?.permissions.includes('team.members.manage') ?? false;
  const owns = ws.owner_id === me.id && !ws.needs_owner;
  const nameOf = (id?: number) => (id === undefined ? 'nobody' : id === me.id ? 'you' : (members.data?.find((m) => m.user_id === id)?.name ?? `user ${id}`));
  const open = transfers.data?.[0];

  return (
    <Section title="Owner" id="owner">
      {ws.needs_owner && (
        <p className="problem" role="status" data-testid="needs-owner">
          <span>
            <Badge label={NEEDS_OWNER} /> Its owner left the team. {manages ? 'Offer it to a member of the team (you can take it yourself).' : 'A team admin can offer it to a member of the team.'}
          </span>
        </p>
      )}
      <p data-testid="workspace-owner">
        Owned by <strong>{nameOf(ws.owner_id)}</strong>
        {ws.needs_owner ? ' (left the team)' : ''}.
      </p>
      <ProblemNotice problem={act.problem ?? transfers.error} onDismiss={act.clear} />
      {transfers.loading && !transfers.data ? (
        <Loading what="transfers" />
      ) : open ? (
        <div className="panel actions" data-testid="open-transfer">
          <span>
            Offered to <strong>{nameOf(open.to_user_id)}</strong> by {nameOf(open.offered_by)} <Time at={open.created_at} />.
          </span>
          {open.to_user_id === me.id && (
            <>
              <Button variant="primary" busy={act.busy} onClick={() => void act.run(open, 'accept')}>
                Accept ownership
              </Button>
              <Button busy={act.busy} onClick={() => void act.run(open, 'decline')}>
                Decline
              </Button>
            </>
          )}
          {(open.offered_by === me.id || manages || owns) && open.to_user_id !== me.id && (
            <ConfirmButton question="Cancel the offer?" confirmText="Cancel offer" onConfirm={() => void act.run(open, 'cancel')} busy={act.busy}>
              Cancel offer
            </ConfirmButton>
          )}
        </div>
      ) : (
        (owns || manages) && <OfferForm ws={ws} members={members.data ?? []} includeOwner={ws.needs_owner ?? false} onOffered={() => void transfers.reload()} />
      )}
    </Section>
  );
}

function OfferForm({ ws, members, includeOwner, onOffered }: { ws: Workspace; members: Member[]; includeOwner: boolean; onOffered: () => void }) {
  const candidates = members.filter((m) => includeOwner || m.user_id !== ws.owner_id);
  const [to, setTo] = useState('');
  const offer = useAction(async () => {
    await answer(svcApi.POST('/api/v1/workspaces/{ws}/owner-transfers', { params: { path: { ws: ws.id } }, body: { to_user_id: Number(to || candidates[0]?.user_id) } }));
    onOffered();
  });
  if (candidates.length === 0) return <p className="muted">No other member of the team to offer it to.</p>;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void offer.run();
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-label="Offer ownership">
      <label>
        Offer to
        <select name="offer-to" value={to || candidates[0].user_id} onChange={(e) => setTo(e.target.value)}>
          {candidates.map((m) => (
            <option key={m.user_id} value={m.user_id}>
              {m.name} ({m.email})
            </option>
          ))}
        </select>
      </label>
      <Button type="submit" busy={offer.busy}>
        Offer ownership
      </Button>
      <ProblemNotice problem={offer.problem} onDismiss={offer.clear} />
    </form>
  );
}

/** Open transfers offered to the signed-in person (accept, decline) or by them (cancel), on the workspaces page. */
export function TransferOffers() {
  const me = useMe();
  const offers = useResource(
    async () => {
      const open = await listAll((page) => svcApi.GET('/api/v1/me/owner-transfers', { params: { query: { state: 'open', ...page } } }));
      const names = new Map<number, string>();
      for (const id of new Set(open.map((t) => t.workspace_id))) {
        const ws = await answer(svcApi.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: id } } })).catch(() => undefined);
        if (ws) names.set(id, ws.name);
      }
      const people = new Map<number, string>();
      for (const team of new Set(open.filter((t) => t.to_user_id !== me.id).map((t) => t.team_id))) {
        const members = await listAll((page) => svcApi.GET('/api/v1/teams/{team}/members', { params: { path: { team }, query: page } })).catch(() => []);
        for (const m of members) people.set(m.user_id, m.name);
      }
      return open.map((transfer) => ({
        transfer,
        name: names.get(transfer.workspace_id) ?? `workspace ${transfer.workspace_id}`,
        to: people.get(transfer.to_user_id) ?? `user ${transfer.to_user_id}`,
      }));
    },
    [],
    transfersChanged,
  );
  const act = useTransferAction(() => offers.reload());
  if (!offers.data || offers.data.length === 0) return null;
  return (
    <Section title="Ownership offers">
      <ProblemNotice problem={act.problem ?? offers.error} onDismiss={act.clear} />
      <ul className="plain-list" aria-label="Ownership offers">
        {offers.data.map(({ transfer, name, to }) => (
          <li key={transfer.id} data-transfer={name} className="actions">
            {transfer.to_user_id === me.id ? (
              <>
                <span>
                  You are offered the workspace <Link to={`/workspaces/${transfer.workspace_id}`}>{name}</Link> <Time at={transfer.created_at} />.
                </span>
                <Button variant="primary" busy={act.busy} onClick={() => void act.run(transfer, 'accept')}>
                  Accept
                </Button>
                <Button busy={act.busy} onClick={() => void act.run(transfer, 'decline')}>
                  Decline
                </Button>
              </>
            ) : (
              <>
                <span>
                  You offered <Link to={`/workspaces/${transfer.workspace_id}`}>{name}</Link> to {to} <Time at={transfer.created_at} />; waiting for an answer.
                </span>
                <Button variant="quiet" busy={act.busy} onClick={() => void act.run(transfer, 'cancel')}>
                  Cancel offer
                </Button>
              </>
            )}
          </li>
        ))}
      </ul>
    </Section>
  );
}
