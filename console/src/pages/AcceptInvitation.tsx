// An invitation link (`/sign-in#invitation=<token>`, mailed or handed over by the inviter): opening it accepts the
// invitation (POST /invitations/accept), which makes the account when the address has none and signs the person
// in; an address with an account must be signed in first (its own means: password or sign-in link), so the token
// waits in this tab's sessionStorage while they sign in, and the sign-in page comes back here. Then it says which
// organization and teams they joined. A used, revoked, replaced or expired link says
// "This link has expired" (spec 7) with the reason.
import { useEffect, useRef, useState } from 'react';
import { answer, asProblem, svcApi, type ApiProblem } from '../api.ts';
import type { InvitationAccepted, Org, Team } from '../types.ts';
import { Button, ProblemNotice, Spinner } from '../ui.tsx';

interface Joined {
  accepted: InvitationAccepted;
  org?: Org;
  teams: { team: Team | undefined; id: number; role: string }[];
}

/** Where an invitation waits while its person signs in (this tab only). */
export const PENDING_INVITATION = 'svc.pendingInvitation';

export function AcceptInvitation({ token }: { token: string }) {
  const [joined, setJoined] = useState<Joined>();
  const [problem, setProblem] = useState<ApiProblem>();
  const started = useRef<string | null>(null);

  useEffect(() => {
    if (started.current === token) return;
    started.current = token;
    // The token must not stay in the address bar or the history.
    window.history.replaceState(null, '', `/sign-in${window.location.search}`);
    void (async () => {
      try {
        const accepted = await answer(svcApi.POST('/api/v1/invitations/accept', { body: { token } }), { quiet401: true });
        // Signed in now (the answer set the session cookie): read the names of what they joined.
        const org = await answer(svcApi.GET('/api/v1/orgs/{org}', { params: { path: { org: accepted.invitation.org_id } } }), { quiet401: true }).catch(() => undefined);
        const mine = await answer(svcApi.GET('/api/v1/teams', { params: { query: { limit: 200 } } }), { quiet401: true }).catch(() => undefined);
        const teams = accepted.invitation.teams.map((t) => ({ team: mine?.items.find((m) => m.id === t.team_id), id: t.team_id, role: t.role }));
        setJoined({ accepted, org, teams });
      } catch (error) {
        setProblem(asProblem(error));
      }
    })();
  }, [token]);

  if (problem?.type === 'urn:svc:problem:invitation-needs-sign-in') {
    window.sessionStorage.setItem(PENDING_INVITATION, token);
    return (
      <div className="stack" data-testid="invitation-sign-in">
        <h1>{problem.title}</h1>
        <p>{problem.detail}</p>
        <Button variant="primary" onClick={() => window.location.replace('/sign-in')}>
          Sign in
        </Button>
      </div>
    );
  }
  if (problem) {
    const expired = problem.type === 'urn:svc:problem:sign-in-link-invalid';
    return (
      <div className="stack" data-testid="invitation-problem">
        <h1>{expired ? problem.title : 'The invitation could not be accepted'}</h1>
        {expired ? <p>{problem.detail}</p> : <ProblemNotice problem={problem} />}
        <p className="muted small">
          Ask whoever invited you for a new invitation, or <a href="/sign-in">sign in</a> if you have an account.
        </p>
      </div>
    );
  }
  if (!joined) {
    return (
      <p className="loading">
        <Spinner /> Accepting your invitation…
      </p>
    );
  }
  const { accepted, org, teams } = joined;
  const first = teams.find((t) => t.team)?.id;
  return (
    <div className="stack" data-testid="invitation-joined">
      <h1>Welcome, {accepted.user.name}</h1>
      <p>
        You joined <strong>{org?.name ?? 'the organization'}</strong>
        {accepted.invitation.role === 'owner' ? ' as an owner' : ''}
        {teams.length > 0 ? ' and its teams:' : '.'}
      </p>
      {teams.length > 0 && (
        <ul aria-label="Teams you joined">
          {teams.map((t) => (
            <li key={t.id}>
              <strong>{t.team?.name ?? `team ${t.id}`}</strong> as {t.role}
            </li>
          ))}
        </ul>
      )}
      {accepted.account_created ? (
        <p className="muted small">
          Your account ({accepted.user.email}) was made just now. It has no password: set one under Settings, or sign in with a link.
        </p>
      ) : (
        <p className="muted small">You are signed in as {accepted.user.email}.</p>
      )}
      <Button variant="primary" onClick={() => window.location.replace(first ? `/?team=${first}` : '/teams')}>
        Open the console
      </Button>
    </div>
  );
}
