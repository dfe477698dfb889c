// /workspace-sign-in?host=H&next=P (&workspace=W for a managed-service host): where the router's "Sign-in required"
// page sends a browser. With the console session it mints a single-use link for that workspace host and goes
// there; opening it sets the host's cookie.
import { useEffect, useRef, useState } from 'react';
import { answer, asProblem, svcApi, type ApiProblem } from '../api.ts';
import { Link } from '../router.tsx';
import { ProblemNotice, Spinner } from '../ui.tsx';

/** The workspace id in a workspace host: `w12.domain`, `ide-w12.domain`, `w12-3000.domain`. */
export function workspaceOfHost(host: string): number | undefined {
  const found = /^(?:ide-)?w([1-9][0-9]*)(?:-[0-9]+)?\./.exec(host);
  return found ? Number(found[1]) : undefined;
}

/** Mints a sign-in link for `host` of workspace `id` and answers its address. */
export async function workspaceLink(id: number, host: string, next = '/'): Promise<string> {
  const link = await answer(svcApi.POST('/api/v1/workspaces/{ws}/sign-in-links', { params: { path: { ws: id } }, body: { host, next } }));
  return link.url;
}

export function WorkspaceSignInPage() {
  const [problem, setProblem] = useState<ApiProblem>();
  const started = useRef(false);
  const query = new URLSearchParams(window.location.search);
  const host = query.get('host') ?? '';
  const next = query.get('next') ?? '/';
  // A managed-service host (ms-<number>) does not name its workspace: the router's page gives it.
  const id = workspaceOfHost(host) ?? (/^ms-[1-9][0-9]*\./.test(host) && /^[1-9][0-9]*$/.test(query.get('workspace') ?? '') ? Number(query.get('workspace')) : undefined);

  useEffect(() => {
    if (started.current || id === undefined) return;
    started.current = true;
    workspaceLink(id, host, next.startsWith('/') && !next.startsWith('//') ? next : '/').then(
      (url) => window.location.replace(url),
      (error: unknown) => setProblem(asProblem(error)),
    );
  }, [id, host, next]);

  return (
    <main className="centered">
      <div className="card">
        <h1>Opening the workspace</h1>
        {id === undefined ? (
          <p className="problem">
            <strong>This is not a workspace address.</strong>
          </p>
        ) : problem ? (
          <ProblemNotice problem={problem} />
        ) : (
          <p className="loading">
            <Spinner /> Signing you in on {host}…
          </p>
        )}
        <p className="small">
          <Link to="/">Back to the console</Link>
        </p>
      </div>
    </main>
  );
}
