// Invitations of an organization (docs/people.md): an org owner invites anyone into the org and its teams, a team
// admin into the teams they administer. The pending ones show their mail state (live from invites.updated); without
// a mail server the link is shown once to the inviter, with a copy button, to hand over another way.
import { useState, type FormEvent } from 'react';
import { answer, listAll, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { invitationStates, labelOf, mailStates } from '../labels.ts';
import type { Invitation, MailState, Org, Team } from '../types.ts';
import { Badge, Button, ConfirmButton, CopyButton, Empty, FieldHint, Loading, ProblemNotice, Section, Time } from '../ui.tsx';

type TeamRole = Invitation['teams'][number]['role'];

const TEAM_ROLES = ['admin', 'developer', 'viewer'];

/** The invitations section for the organization of `team`, shown to those who may invite into it. */
export function Invitations({ team, org, teams }: { team: Team; org?: Org; teams: Team[] }) {
  const orgId = team.org_id;
  const wholeOrg = org?.permissions.includes('org.members.manage') ?? false;
  const managed = teams.filter((t) => t.org_id === orgId && t.permissions.includes('team.members.manage'));
  const mayInvite = wholeOrg || managed.length > 0;
  const list = useResource(
    async () => (mayInvite ? listAll((page) => svcApi.GET('/api/v1/orgs/{org}/invitations', { params: { path: { org: orgId }, query: page } })) : []),
    [orgId, mayInvite],
    (e) => e.type === 'invites.updated' && e.org_id === orgId,
  );
  const [shown, setShown] = useState<Invitation>();
  const open = (list.data ?? []).filter((i) => i.state === 'pending' || i.state === 'expired');
  const teamName = (id: number) => teams.find((t) => t.id === id)?.name ?? `team ${id}`;
  const act = useAction(async (invitation: Invitation, action: 'revoke' | 'renew') => {
    const changed = await answer(svcApi.POST(`/api/v1/invitations/{id}/${action}`, { params: { path: { id: invitation.id } } }));
    setShown('url' in changed && changed.url ? changed : undefined);
    await list.reload();
  });
  if (!mayInvite) return null;

  return (
    <Section title={`Invitations to ${org?.name ?? 'the organization'}`} id="invitations">
      <InviteForm orgId={orgId} wholeOrg={wholeOrg} teams={wholeOrg ? teams.filter((t) => t.org_id === orgId) : managed} preselected={team.id} onInvited={(made) => {
          setShown(made.url ? made : undefined);
          void list.reload();
        }} />
      {shown?.url && <LinkOnce invitation={shown} onDone={() => setShown(undefined)} />}
      <ProblemNotice problem={act.problem ?? list.error} onDismiss={act.clear} />
      {list.loading && !list.data ? (
        <Loading what="invitations" />
      ) : open.length === 0 ? (
        <Empty>No pending invitations.</Empty>
      ) : (
        <table className="table" aria-label="Pending invitations">
          <thead>
            <tr>
              <th>E-mail</th>
              <th>Into</th>
              <th>State</th>
              <th>Mail</th>
              <th>Expires</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {open.map((invitation) => (
              <tr key={invitation.id} data-invitation={invitation.email}>
                <td>{invitation.email}</td>
                <td data-label="Into">
                  {invitation.role === 'owner' ? 'owner of the organization' : 'member'}
                  {invitation.teams.map((t) => `; ${teamName(t.team_id)} (${t.role})`).join('')}
                </td>
                <td data-label="State">
                  <Badge label={labelOf(invitationStates, invitation.state)} />
                </td>
                <td data-label="Mail" className="mail-state">
                  <MailBadge mail={invitation.mail} />
                </td>
                <td data-label="Expires">
                  <Time at={invitation.expires_at} />
                </td>
                <td className="row-actions">
                  <Button variant="quiet" onClick={() => void act.run(invitation, 'renew')} title="A new link and expiry; the old link stops working">
                    Renew
                  </Button>
                  <ConfirmButton question={`Revoke the invitation of ${invitation.email}?`} confirmText="Revoke" onConfirm={() => void act.run(invitation, 'revoke')}>
                    Revoke
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

/** The mail state, and what it means when that says more (the reason of a failure, the next attempt). */
function MailBadge({ mail }: { mail: MailState }) {
  const label = labelOf(mailStates, mail.state);
  return (
    <span className="state">
      <Badge label={label} title={mail.detail} />
      {mail.detail.toLowerCase() !== label.text.toLowerCase() && <span className="status-text">{mail.detail}</span>}
    </span>
  );
}

/** The link of an invitation made without a mail server: shown this once. */
function LinkOnce({ invitation, onDone }: { invitation: Invitation; onDone: () => void }) {
  return (
    <div className="token-box" role="status" data-testid="invitation-link">
      <p>
        <strong>Not sent: no mail server configured.</strong> Give {invitation.email} this link another way; it is shown only now and works once, until{' '}
        <Time at={invitation.expires_at} />.
      </p>
      <div className="token-row">
        <code className="token" data-testid="invitation-url">
          {invitation.url}
        </code>
        <CopyButton text={invitation.url!} title="Copy the invitation link" />
      </div>
      <Button variant="quiet" onClick={onDone}>
        Done
      </Button>
    </div>
  );
}

function InviteForm({ orgId, wholeOrg, teams, preselected, onInvited }: { orgId: string; wholeOrg: boolean; teams: Team[]; preselected: number; onInvited: (made: Invitation) => void }) {
  const [email, setEmail] = useState('');
  const [owner, setOwner] = useState(false);
  const [roles, setRoles] = useState<Record<number, TeamRole | undefined>>({ [preselected]: 'developer' });
  const invite = useAction(async () => {
    const chosen = teams.filter((t) => roles[t.id]).map((t) => ({ team_id: t.id, role: roles[t.id]! }));
    const made = await answer(svcApi.POST('/api/v1/orgs/{org}/invitations', { params: { path: { org: orgId } }, body: { email: email.trim(), role: owner ? 'owner' : 'member', teams: chosen } }));
    setEmail('');
    onInvited(made);
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void invite.run();
  };
  return (
    <form className="panel stack" onSubmit={submit} aria-label="Invite someone">
      <div className="row">
        <label className="grow">
          E-mail
          <input name="invite-email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} required maxLength={320} placeholder="name@example.com" />
          <FieldHint problem={invite.problem} pointer="/email" />
        </label>
        {wholeOrg && (
          <label className="toggle">
            <input type="checkbox" checked={owner} onChange={(e) => setOwner(e.target.checked)} /> Owner of the organization
          </label>
        )}
      </div>
      <fieldset className="choice teams">
        <legend>Into teams</legend>
        {teams.map((t) => (
          <div key={t.id} className="row team-choice">
            <label>
              <input type="checkbox" aria-label={`Into ${t.name}`} checked={roles[t.id] !== undefined} onChange={(e) => setRoles({ ...roles, [t.id]: e.target.checked ? 'developer' : undefined })} /> {t.name}
            </label>
            {roles[t.id] && (
              <select aria-label={`Role in ${t.name}`} value={roles[t.id]} onChange={(e) => setRoles({ ...roles, [t.id]: e.target.value as TeamRole })}>
                {TEAM_ROLES.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            )}
          </div>
        ))}
      </fieldset>
      <ProblemNotice problem={invite.problem} onDismiss={invite.clear} />
      <div className="actions">
        <Button type="submit" variant="primary" busy={invite.busy}>
          Send invitation
        </Button>
      </div>
    </form>
  );
}
