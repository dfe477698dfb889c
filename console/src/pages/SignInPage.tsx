// /sign-in: a single-use link (`/sign-in#token=...`, printed by the server or `svc admin sign-in-link`) or e-mail
// and password; both answer with the session cookie. An invitation link (`#invitation=...`) is accepted instead
// (AcceptInvitation). `?return=/path` comes back to the page that needed it
// (the console's own, /workspace-sign-in or /cli-login) by a full navigation, so server pages work too. Each single
// sign-on provider of the installation has a button: a full navigation to its start, which comes back to `return`.
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { answer, asProblem, svcApi, type ApiProblem } from '../api.ts';
import { safeReturnPath } from '../router.tsx';
import type { Me } from '../types.ts';
import { Button, ProblemNotice, Spinner } from '../ui.tsx';
import { AcceptInvitation, PENDING_INVITATION } from './AcceptInvitation.tsx';

export function SignInPage({ signedIn }: { signedIn?: Me }) {
  const back = safeReturnPath(new URLSearchParams(window.location.search).get('return'));
  const tokenInAddress = () => new URLSearchParams(window.location.hash.slice(1)).get('token');
  const invitationInAddress = () => new URLSearchParams(window.location.hash.slice(1)).get('invitation');
  const [token, setToken] = useState(tokenInAddress);
  const [invitation, setInvitation] = useState(invitationInAddress);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem>();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const started = useRef<string | null>(null);
  const [providers, setProviders] = useState<Array<{ id: string; name: string; start_url: string }>>([]);

  useEffect(() => {
    answer(svcApi.GET('/api/v1/auth/providers'), { quiet401: true }).then((list) => setProviders(list ?? []), () => setProviders([]));
  }, []);

  const signIn = async (body: Record<string, string>) => {
    setBusy(true);
    setProblem(undefined);
    try {
      await answer(svcApi.POST('/api/v1/sessions', { body }), { quiet401: true });
      // An invitation for this account waited while the person signed in: accept it now.
      const pending = window.sessionStorage.getItem(PENDING_INVITATION);
      window.sessionStorage.removeItem(PENDING_INVITATION);
      // Only the fragment changes: the hashchange listener below shows the invitation.
      window.location.replace(pending ? `/sign-in#invitation=${encodeURIComponent(pending)}` : back);
    } catch (error) {
      setProblem(asProblem(error));
      setBusy(false);
    }
  };

  // A link opened in a tab that shows this page already only changes the fragment.
  useEffect(() => {
    const changed = () => {
      setToken(tokenInAddress());
      setInvitation((before) => invitationInAddress() ?? before);
    };
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);

  useEffect(() => {
    if (!token || started.current === token) return;
    started.current = token;
    // The token must not stay in the address bar or the history.
    window.history.replaceState(null, '', `/sign-in${window.location.search}`);
    void signIn({ link_token: token });
  }, [token]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void signIn({ email, password });
  };

  if (invitation) {
    return (
      <SignInCard>
        <AcceptInvitation key={invitation} token={invitation} />
      </SignInCard>
    );
  }

  return (
    <SignInCard>
      <h1>Sign in</h1>
      {token && busy && !problem ? (
        <p className="loading">
          <Spinner /> Signing you in with your link…
        </p>
      ) : (
        <>
          {signedIn && !token && (
            <p className="notice">
              You are signed in as {signedIn.name}. <a href={back}>Continue</a>, or sign in as someone else.
            </p>
          )}
          <ProblemNotice problem={problem} />
          {providers.length > 0 && (
            <div className="stack" aria-label="Single sign-on">
              {providers.map((provider) => (
                <a key={provider.id} className="button primary" href={`${provider.start_url}?return=${encodeURIComponent(back)}`}>
                  Sign in with {provider.name}
                </a>
              ))}
              <p className="muted small">or with your e-mail and password:</p>
            </div>
          )}
          <form onSubmit={submit} className="stack">
            <label>
              E-mail
              <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
            </label>
            <label>
              Password
              <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
            </label>
            <Button type="submit" variant="primary" busy={busy}>
              Sign in
            </Button>
          </form>
          <p className="muted small">
            No password yet? Open a sign-in link: the server prints one at its first start, and <code>svc admin sign-in-link</code> makes a new one.
          </p>
        </>
      )}
    </SignInCard>
  );
}

function SignInCard({ children }: { children: ReactNode }) {
  return (
    <main className="centered">
      <div className="card signin">
        <div className="brand big">
          <img src="/favicon.svg" alt="" width={32} height={32} /> svc
        </div>
        {children}
      </div>
    </main>
  );
}
