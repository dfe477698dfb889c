// The console: who is signed in, the layout, and which page a path shows. Without a session every page but the
// sign-in page sends the browser to /sign-in and comes back to the page afterwards.
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { answer, asProblem, svcApi, whenSignedOut, type ApiProblem } from './api.ts';
import { events } from './events.ts';
import { useLinkState } from './hooks.ts';
import { OperationsDock, OperationsProvider, useOperations } from './operations.tsx';
import { OperationsPage } from './pages/OperationsPage.tsx';
import { SettingsPage } from './pages/SettingsPage.tsx';
import { SignInPage } from './pages/SignInPage.tsx';
import { TeamsPage } from './pages/TeamsPage.tsx';
import { WorkspacePage } from './pages/WorkspacePage.tsx';
import { WorkspaceSignInPage } from './pages/WorkspaceSignInPage.tsx';
import { WorkspacesPage } from './pages/WorkspacesPage.tsx';
import { Link, match, navigate, useLocation, type Location } from './router.tsx';
import type { Me } from './types.ts';
import { Button, Empty, ProblemNotice, Spinner } from './ui.tsx';

const MeContext = createContext<Me | undefined>(undefined);

/** The signed-in person (inside the signed-in part of the console). */
export function useMe(): Me {
  return useContext(MeContext)!;
}

export function App() {
  const location = useLocation();
  const [me, setMe] = useState<Me | null>();
  const [problem, setProblem] = useState<ApiProblem>();

  useEffect(() => {
    whenSignedOut(() => setMe(null));
    answer(svcApi.GET('/api/v1/me'), { quiet401: true }).then(setMe, (error: unknown) => {
      const failure = asProblem(error);
      if (failure.status === 401) setMe(null);
      else setProblem(failure);
    });
  }, []);

  useEffect(() => {
    if (me) events.start();
    else events.stop();
  }, [me]);

  const onSignInPage = location.path === '/sign-in';
  useEffect(() => {
    if (me !== null || onSignInPage) return;
    const search = location.query.toString();
    const back = `${location.path}${search ? `?${search}` : ''}`;
    navigate(back === '/' ? '/sign-in' : `/sign-in?return=${encodeURIComponent(back)}`, { replace: true });
  }, [me, onSignInPage, location]);

  if (onSignInPage) return <SignInPage signedIn={me ?? undefined} />;
  if (problem) {
    return (
      <main className="centered">
        <div className="card">
          <h1>The console cannot start</h1>
          <ProblemNotice problem={problem} />
          <Button onClick={() => window.location.reload()}>Try again</Button>
        </div>
      </main>
    );
  }
  if (!me) {
    return (
      <main className="centered">
        <p className="loading">
          <Spinner /> Loading…
        </p>
      </main>
    );
  }
  return (
    <MeContext.Provider value={me}>
      <OperationsProvider>
        {location.path === '/workspace-sign-in' ? (
          <WorkspaceSignInPage />
        ) : (
          <Shell me={me} location={location}>
            <Page location={location} />
          </Shell>
        )}
      </OperationsProvider>
    </MeContext.Provider>
  );
}

function Page({ location }: { location: Location }) {
  const { path } = location;
  if (path === '/' || path === '/workspaces') return <WorkspacesPage />;
  const workspace = match('/workspaces/:id', path);
  if (workspace && /^[1-9]\d*$/.test(workspace.id)) return <WorkspacePage key={workspace.id} id={Number(workspace.id)} />;
  if (path === '/teams') return <TeamsPage />;
  if (path === '/operations') return <OperationsPage />;
  if (path === '/settings') return <SettingsPage />;
  return (
    <Empty>
      <h1>Page not found</h1>
      <p>
        Nothing lives at <code>{path}</code>. <Link to="/">Go to the workspaces</Link>.
      </p>
    </Empty>
  );
}

const NAV: [string, string, (path: string) => boolean][] = [
  ['/', 'Workspaces', (p) => p === '/' || p.startsWith('/workspaces')],
  ['/teams', 'Teams', (p) => p === '/teams'],
  ['/operations', 'Operations', (p) => p === '/operations'],
  ['/settings', 'Settings', (p) => p === '/settings'],
];

function Shell({ me, location, children }: { me: Me; location: Location; children: ReactNode }) {
  const link = useLinkState();
  const running = useOperations().list.filter((o) => o.state === 'pending' || o.state === 'running').length;
  const [signingOut, setSigningOut] = useState(false);
  const signOut = async () => {
    setSigningOut(true);
    const ended = await answer(svcApi.DELETE('/api/v1/sessions/current'), { quiet401: true }).catch(() => undefined);
    events.stop();
    // A session from a single sign-on provider that signs out too: its sign-out page, which comes back to /sign-in.
    const providerSignOut = ended && typeof ended === 'object' && 'end_session_url' in ended ? ended.end_session_url : undefined;
    window.location.replace(providerSignOut ?? '/sign-in');
  };
  const header = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // Scrolling an element into view (focus, anchors) keeps it below the sticky header, never under it.
    const element = header.current!;
    const observer = new ResizeObserver(() => document.documentElement.style.setProperty('--header-height', `${element.offsetHeight}px`));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const onWorkspace = match('/workspaces/:id', location.path);
  return (
    <div className="shell">
      <div className="frame-top" ref={header}>
        <header className="topbar">
          <Link to="/" className="brand" aria-label="svc home">
            <img src="/favicon.svg" alt="" width={24} height={24} />
            svc
          </Link>
          <nav className="mainnav" aria-label="Main">
            {NAV.map(([to, text, active]) => (
              <Link key={to} to={to} className={active(location.path) ? 'active' : undefined} aria-current={active(location.path) ? 'page' : undefined}>
                {text}
                {to === '/operations' && running > 0 && <span className="count">{running}</span>}
              </Link>
            ))}
          </nav>
          <div className="account">
            <span className={`link-state ${link}`} title={link === 'live' ? 'Updates arrive live' : 'Reconnecting to the event stream'}>
              {link === 'live' ? 'Live' : link === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
            </span>
            <span className="who" title={me.email}>
              {me.name}
              {me.permissions.includes('platform.admin') && <span className="muted"> · admin</span>}
            </span>
            <Button variant="quiet" onClick={() => void signOut()} busy={signingOut}>
              Sign out
            </Button>
          </div>
        </header>
        <OperationsDock shownElsewhere={onWorkspace ? `/workspaces/${onWorkspace.id}` : undefined} />
      </div>
      <main className="content">{children}</main>
    </div>
  );
}
