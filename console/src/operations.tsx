// Operations under way (spec 2.4): those this console started, those the event stream announces
// (`operation.updated` carries the full operation), and after every `ready` those running and those failed in the
// last hour (GET /operations), so a reload forgets nothing. Unfinished ones are read again after every `ready`.
// The dock under the header shows their progress text and failures, one line each.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, useSyncExternalStore, type ReactNode } from 'react';
import { answer, ApiProblem, svcApi } from './api.ts';
import { useEvents } from './hooks.ts';
import { labelOf, operationKinds, operationStates } from './labels.ts';
import { Link } from './router.tsx';
import type { paths } from '../../sdk/src/index.ts';
import type { Operation } from './types.ts';
import { Badge, ProblemNotice, Time } from './ui.tsx';

type OperationsQuery = NonNullable<paths['/api/v1/operations']['get']['parameters']['query']>;

/** The operations page's filters as the address holds them (empty: none), as the query of GET /operations. */
export function operationFilters(filters: { state: string; kind: string; team: string }): Pick<OperationsQuery, 'state' | 'kind' | 'team'> {
  return {
    ...(filters.state ? { state: filters.state as OperationsQuery['state'] } : {}),
    ...(filters.kind ? { kind: filters.kind } : {}),
    ...(filters.team ? { team: Number(filters.team) } : {}),
  };
}

interface Tracked {
  operation: Operation;
  dismissed: boolean;
}

interface OperationsContext {
  list: Operation[];
  track: (operation: Operation) => void;
  dismiss: (id: string) => void;
  visible: Operation[];
}

/** Names of workspaces seen in lists and events, so an operation can say which workspace it acts on. */
const workspaceNames = new Map<number, string>();

/** Lines that show names read again when a name arrives, wherever it came from. */
const nameListeners = new Set<() => void>();
let namesRead = 0;

export function rememberWorkspaces(workspaces: { id: number; name: string }[]): void {
  const changed = workspaces.filter((ws) => workspaceNames.get(ws.id) !== ws.name);
  for (const ws of changed) workspaceNames.set(ws.id, ws.name);
  if (changed.length === 0) return;
  namesRead++;
  for (const listener of nameListeners) listener();
}

const subscribeToNames = (listener: () => void) => (nameListeners.add(listener), () => void nameListeners.delete(listener));

/** Workspaces whose names were asked for once, so a line is never read again for a name the caller may not see. */
const namesAsked = new Set<number>();

/**
 * Reads the names of workspaces these operations act on that no list of this page has shown (a page opened on
 * another workspace, an operation announced by event), so each line names its workspace instead of its number.
 */
function useWorkspaceNames(operations: Operation[]): void {
  useSyncExternalStore(subscribeToNames, () => namesRead);
  const missing = [...new Set(operations.map(workspaceOf).filter((w) => w && w.name === undefined).map((w) => Number(w!.id)))].filter((id) => !namesAsked.has(id));
  useEffect(() => {
    for (const id of missing) {
      namesAsked.add(id);
      void answer(svcApi.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: id } } })).then((ws) => rememberWorkspaces([ws]), () => undefined);
    }
  }, [missing.join(',')]);
}

/** Failures this old still come to the dock when the console opens, unless dismissed (in this browser) before. */
const RECENT_FAILURES_MS = 60 * 60_000;
const DISMISSED_KEY = 'svc.dismissed-operations';

function readDismissed(): Set<string> {
  try {
    return new Set(JSON.parse(localStorage.getItem(DISMISSED_KEY) ?? '[]') as string[]);
  } catch {
    return new Set();
  }
}

const dismissedBefore = readDismissed();

function rememberDismissed(id: string): void {
  dismissedBefore.add(id);
  try {
    localStorage.setItem(DISMISSED_KEY, JSON.stringify([...dismissedBefore].slice(-200)));
  } catch {
    // storage full or turned off: the dismissal lasts as long as the page
  }
}

const Context = createContext<OperationsContext>({ list: [], track: () => undefined, dismiss: () => undefined, visible: [] });

export const finished = (operation: Operation) => operation.state === 'succeeded' || operation.state === 'failed';

/** A workspace as last seen (event or read): its state and when it changed; `gone` when it no longer exists. */
interface SeenWorkspace {
  state: string;
  updatedAt: string;
}

/**
 * A failure of a workspace's operation stays in the dock only while its workspace stands where the failure left it:
 * once a later operation acts on it, or the workspace left Error after the failure (a Retry that worked, also one
 * done while this page was away), or it is gone, the failure has been moved past.
 */
export function movedPast(operation: Operation, operations: Operation[], workspaces: Map<number, SeenWorkspace | 'gone'>): boolean {
  if (operation.state !== 'failed' || !operation.target) return false;
  if (operations.some((other) => other.target === operation.target && other.id !== operation.id && other.created_at > operation.created_at)) return true;
  const id = /^\/workspaces\/(\d+)$/.exec(operation.target)?.[1];
  const seen = id === undefined ? undefined : workspaces.get(Number(id));
  if (seen === 'gone') return true;
  return seen !== undefined && seen.state !== 'error' && seen.updatedAt > (operation.finished_at ?? operation.updated_at);
}

export function OperationsProvider({ children }: { children: ReactNode }) {
  const [tracked, setTracked] = useState<Map<string, Tracked>>(new Map());
  const [workspaces, setWorkspaces] = useState<Map<number, SeenWorkspace | 'gone'>>(new Map());
  const seeWorkspace = useCallback((id: number, seen: SeenWorkspace | 'gone') => {
    setWorkspaces((before) => {
      const known = before.get(id);
      if (known && known !== 'gone' && seen !== 'gone' && known.updatedAt > seen.updatedAt) return before;
      return new Map(before).set(id, seen);
    });
  }, []);
  /** Reads the workspaces of failures (after a reconnect: what happened to them while the stream was away). */
  const readWorkspacesOf = useCallback((failures: Operation[]) => {
    const ids = new Set(failures.filter((o) => o.state === 'failed').map((o) => /^\/workspaces\/(\d+)$/.exec(o.target ?? '')?.[1]).filter((id) => id !== undefined).map(Number));
    for (const id of ids) {
      void svcApi.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: id } } }).then(
        ({ data, response }) => {
          if (data) seeWorkspace(id, { state: data.state, updatedAt: data.updated_at });
          else if (response.status === 404) seeWorkspace(id, 'gone');
        },
        () => undefined,
      );
    }
  }, [seeWorkspace]);

  const upsert = useCallback((operation: Operation) => {
    setTracked((before) => {
      const known = before.get(operation.id);
      // Events and answers may cross: never go back to an older state of the same operation.
      if (known && known.operation.updated_at > operation.updated_at) return before;
      const next = new Map(before);
      next.set(operation.id, { operation, dismissed: known?.dismissed ?? dismissedBefore.has(operation.id) });
      return next;
    });
  }, []);

  useEvents((event) => {
    if (event.workspace) rememberWorkspaces([event.workspace]);
    if (event.workspace) seeWorkspace(event.workspace.id, { state: event.workspace.state, updatedAt: event.workspace.updated_at });
    if (event.type === 'workspace.purged' && event.workspace_id !== undefined) seeWorkspace(event.workspace_id, 'gone');
    if (event.type === 'operation.updated' && event.operation) upsert(event.operation);
    if (event.type === 'ready') {
      for (const { operation } of tracked.values()) {
        if (!finished(operation)) void answer(svcApi.GET('/api/v1/operations/{id}', { params: { path: { id: operation.id } } })).then(upsert, () => undefined);
      }
      readWorkspacesOf([...tracked.values()].map((t) => t.operation));
      // What runs now and what failed lately, also when it started before this page was opened.
      const since = Date.now() - RECENT_FAILURES_MS;
      void answer(svcApi.GET('/api/v1/operations', { params: { query: { active: true, limit: 50 } } })).then((page) => page.items.forEach(upsert), () => undefined);
      void answer(svcApi.GET('/api/v1/operations', { params: { query: { state: 'failed', limit: 20 } } })).then(
        (page) => {
          const recent = page.items.filter((o) => new Date(o.finished_at ?? o.updated_at).getTime() > since);
          recent.forEach(upsert);
          readWorkspacesOf(recent);
        },
        () => undefined,
      );
    }
  });

  const value = useMemo<OperationsContext>(() => {
    const list = [...tracked.values()].map((t) => t.operation).sort((a, b) => b.created_at.localeCompare(a.created_at) || b.updated_at.localeCompare(a.updated_at));
    // The dock keeps what runs and what failed (until dismissed); finished ones stay listed on /operations.
    const visible = list.filter((operation) => operation.state !== 'succeeded' && !tracked.get(operation.id)!.dismissed && !movedPast(operation, list, workspaces));
    return {
      list,
      visible,
      track: upsert,
      dismiss: (id) => {
        rememberDismissed(id);
        setTracked((before) => {
          const known = before.get(id);
          if (!known) return before;
          return new Map(before).set(id, { ...known, dismissed: true });
        });
      },
    };
  }, [tracked, upsert, workspaces]);
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

export function useOperations(): OperationsContext {
  return useContext(Context);
}

export function operationTitle(operation: Operation): string {
  return operationKinds[operation.kind] ?? operation.kind;
}

/** How long something took (or takes so far): "4 s", "2 min 5 s", "1 h 3 min". */
export function duration(from: string | null | undefined, to: string | null | undefined): string | undefined {
  if (!from) return undefined;
  const ms = (to ? new Date(to).getTime() : Date.now()) - new Date(from).getTime();
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function workspaceOf(operation: Operation): { id: string; name?: string } | undefined {
  const id = /^\/workspaces\/(\d+)$/.exec(operation.target ?? '')?.[1];
  return id ? { id, name: workspaceNames.get(Number(id)) } : undefined;
}

export function OperationRow({ operation, onDismiss }: { operation: Operation; onDismiss?: () => void }) {
  const workspace = workspaceOf(operation);
  const took = finished(operation) ? duration(operation.created_at, operation.finished_at) : undefined;
  return (
    <li className={`operation state-${operation.state}`} data-operation={operation.kind} data-state={operation.state}>
      <div className="operation-head">
        <Badge label={labelOf(operationStates, operation.state)} />
        <strong>{operationTitle(operation)}</strong>
        {workspace && (
          <Link to={`/workspaces/${workspace.id}`} className="muted">
            {workspace.name ?? `workspace ${workspace.id}`}
          </Link>
        )}
        <span className="muted small">
          <Time at={operation.created_at} />
          {took && <span className="took"> · took {took}</span>}
        </span>
        {onDismiss && finished(operation) && (
          <button type="button" className="link dismiss" onClick={onDismiss} aria-label="Dismiss">
            ×
          </button>
        )}
      </div>
      {operation.detail && operation.state !== 'failed' && <p className="operation-detail">{operation.detail}</p>}
      {operation.error && <ProblemNotice problem={new ApiProblem(operation.error)} />}
    </li>
  );
}

/** One line of the dock: what runs and its progress, or what failed and why in a few words. */
function DockLine({ operation, onDismiss }: { operation: Operation; onDismiss: () => void }) {
  const workspace = workspaceOf(operation);
  const text = operation.state === 'failed' ? operation.error?.title ?? 'Failed' : operation.detail ?? labelOf(operationStates, operation.state).text;
  return (
    <li className={`dock-line state-${operation.state}`} data-operation={operation.kind} data-state={operation.state}>
      <Badge label={labelOf(operationStates, operation.state)} />
      <strong>{operationTitle(operation)}</strong>
      {workspace && <Link to={`/workspaces/${workspace.id}`}>{workspace.name ?? `workspace ${workspace.id}`}</Link>}
      <span className="dock-text" title={operation.error?.detail ?? text}>
        {text}
      </span>
      {finished(operation) && (
        <button type="button" className="link dismiss" onClick={onDismiss} aria-label="Dismiss">
          ×
        </button>
      )}
    </li>
  );
}

/**
 * The dock under the header: operations still running and failures until dismissed, one line each. It is part of
 * the page's header, never over the page's controls; a workspace's page lists that workspace's operations itself
 * (with the whole problem), so the dock leaves them out there and each failure shows once.
 */
export function OperationsDock({ shownElsewhere }: { shownElsewhere?: string }) {
  const { visible, dismiss } = useOperations();
  const mine = visible.filter((operation) => operation.target === undefined || operation.target !== shownElsewhere);
  const shown = mine.slice(0, 3);
  useWorkspaceNames(shown);
  if (mine.length === 0) return null;
  return (
    <aside className="dock" aria-label="Operations">
      <ul>
        {shown.map((operation) => (
          <DockLine key={operation.id} operation={operation} onDismiss={() => dismiss(operation.id)} />
        ))}
      </ul>
      {mine.length > shown.length && (
        <Link to="/operations" className="small">
          {mine.length - shown.length} more
        </Link>
      )}
    </aside>
  );
}
