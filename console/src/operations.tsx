// Operations under way (spec 2.4): those this console started and those the event stream announces
// (`operation.updated` carries the full operation). Unfinished ones are read again after every `ready`.
// The dock in the corner shows their progress text and how they ended; a failure shows its problem.
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { api, ApiProblem } from './api.ts';
import { useEvents } from './hooks.ts';
import { labelOf, operationKinds, operationStates } from './labels.ts';
import { Link } from './router.tsx';
import type { Operation } from './types.ts';
import { Badge, ProblemNotice, Time } from './ui.tsx';

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

export function rememberWorkspaces(workspaces: { id: number; name: string }[]): void {
  for (const ws of workspaces) workspaceNames.set(ws.id, ws.name);
}

const Context = createContext<OperationsContext>({ list: [], track: () => undefined, dismiss: () => undefined, visible: [] });

export const finished = (operation: Operation) => operation.state === 'succeeded' || operation.state === 'failed';

export function OperationsProvider({ children }: { children: ReactNode }) {
  const [tracked, setTracked] = useState<Map<string, Tracked>>(new Map());

  const upsert = useCallback((operation: Operation) => {
    setTracked((before) => {
      const known = before.get(operation.id);
      // Events and answers may cross: never go back to an older state of the same operation.
      if (known && known.operation.updated_at > operation.updated_at) return before;
      const next = new Map(before);
      next.set(operation.id, { operation, dismissed: known?.dismissed ?? false });
      return next;
    });
  }, []);

  useEvents((event) => {
    if (event.workspace) rememberWorkspaces([event.workspace]);
    if (event.type === 'operation.updated' && event.operation) upsert(event.operation);
    if (event.type === 'ready') {
      for (const { operation } of tracked.values()) {
        if (!finished(operation)) void api<Operation>('GET', `/operations/${operation.id}`).then(upsert, () => undefined);
      }
    }
  });

  const value = useMemo<OperationsContext>(() => {
    const list = [...tracked.values()].map((t) => t.operation).sort((a, b) => b.created_at.localeCompare(a.created_at) || b.updated_at.localeCompare(a.updated_at));
    // The dock keeps what runs and what failed (until dismissed); finished ones stay listed on /operations.
    const visible = list.filter((operation) => operation.state !== 'succeeded' && !tracked.get(operation.id)!.dismissed);
    return {
      list,
      visible,
      track: upsert,
      dismiss: (id) =>
        setTracked((before) => {
          const known = before.get(id);
          if (!known) return before;
          return new Map(before).set(id, { ...known, dismissed: true });
        }),
    };
  }, [tracked, upsert]);
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

export function useOperations(): OperationsContext {
  return useContext(Context);
}

/** The operations on one target (`/workspaces/12`), newest first. */
export function useOperationsOn(target: string): Operation[] {
  return useOperations().list.filter((operation) => operation.target === target);
}

export function operationTitle(operation: Operation): string {
  return operationKinds[operation.kind] ?? operation.kind;
}

export function OperationRow({ operation, onDismiss }: { operation: Operation; onDismiss?: () => void }) {
  const workspace = /^\/workspaces\/(\d+)$/.exec(operation.target ?? '')?.[1];
  const name = workspace ? workspaceNames.get(Number(workspace)) : undefined;
  return (
    <li className={`operation state-${operation.state}`} data-operation={operation.kind}>
      <div className="operation-head">
        <Badge label={labelOf(operationStates, operation.state)} />
        <strong>{operationTitle(operation)}</strong>
        {workspace && (
          <Link to={`/workspaces/${workspace}`} className="muted">
            {name ?? `workspace ${workspace}`}
          </Link>
        )}
        <span className="muted small">
          <Time at={operation.finished_at ?? operation.updated_at} />
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

/** The corner dock: operations still running, and failures until dismissed. */
export function OperationsDock() {
  const { visible, dismiss } = useOperations();
  if (visible.length === 0) return null;
  const shown = visible.slice(0, 4);
  return (
    <aside className="dock" aria-label="Operations">
      <ul>
        {shown.map((operation) => (
          <OperationRow key={operation.id} operation={operation} onDismiss={() => dismiss(operation.id)} />
        ))}
      </ul>
      {visible.length > shown.length && (
        <Link to="/operations" className="small">
          {visible.length - shown.length} more
        </Link>
      )}
    </aside>
  );
}
