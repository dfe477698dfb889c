// What a person can do to a workspace, shared by the list and the workspace page: open its editor or dev URL
// (through a single-use sign-in link), sleep, wake, start, retry after an error, rename, archive, delete; restore
// and purge once deleted.
// Long actions answer an operation, which the operations dock follows.
import { useState, type FormEvent } from 'react';
import { answer, answerWithEtag, idempotent, ifMatch, svcApi } from './api.ts';
import { useAction } from './hooks.ts';
import { useOperations } from './operations.tsx';
import { workspaceLink } from './pages/WorkspaceSignInPage.tsx';
import type { Workspace } from './types.ts';
import { Button, ConfirmButton, FieldHint, Menu, ProblemNotice } from './ui.tsx';

const can = (ws: Workspace, permission: string) => ws.permissions?.includes(permission) ?? false;

/**
 * Opens a workspace address in a new tab, signed in. The tab is opened at the click (a later window.open would be
 * taken for a pop-up) and sent on once the link is minted.
 */
export async function openAddress(ws: Workspace, which: 'ide' | 'dev'): Promise<void> {
  const tab = window.open('about:blank', '_blank');
  try {
    const url = await workspaceLink(ws.id, new URL(ws.urls[which]).host);
    if (tab) {
      tab.opener = null;
      tab.location.href = url;
    } else window.location.assign(url);
  } catch (error) {
    tab?.close();
    throw error;
  }
}

export function useWorkspaceActions(ws: Workspace, onChanged?: () => void) {
  const { track } = useOperations();
  const path = { ws: ws.id };
  type Action = 'wake' | 'start' | 'archive' | 'restore-archive' | 'restore' | 'purge';
  const operation = (action: Action) => answer(svcApi.POST(`/api/v1/workspaces/{ws}/${action}`, { params: { path }, headers: idempotent() })).then(track);
  const current = () => answerWithEtag(svcApi.GET('/api/v1/workspaces/{ws}', { params: { path } }));
  const done = <T,>(value: T) => {
    onChanged?.();
    return value;
  };
  return {
    open: (which: 'ide' | 'dev') => openAddress(ws, which),
    sleep: () => answer(svcApi.POST('/api/v1/workspaces/{ws}/sleep', { params: { path } })).then(done),
    wake: () => operation('wake').then(done),
    start: () => operation('start').then(done),
    archive: () => operation('archive').then(done),
    restoreArchive: () => operation('restore-archive').then(done),
    restore: () => operation('restore').then(done),
    purge: () => operation('purge').then(done),
    remove: async () => {
      const { etag } = await current();
      return answer(svcApi.DELETE('/api/v1/workspaces/{ws}', { params: { path }, headers: ifMatch(etag) })).then(track).then(done);
    },
    /** A failed clone's repository corrected (address and ref), then cloned again by the Retry. */
    correctAndRetry: async (git: { repo: string; ref: string | null }) => {
      const { etag } = await current();
      await answer(svcApi.PATCH('/api/v1/workspaces/{ws}', { params: { path }, body: { git }, headers: ifMatch(etag) }));
      return operation('wake').then(done);
    },
    rename: async (name: string) => {
      const { etag } = await current();
      return answer(svcApi.PATCH('/api/v1/workspaces/{ws}', { params: { path }, body: { name }, headers: ifMatch(etag) })).then(done);
    },
  };
}

/** The buttons for a live workspace, by its state and the caller's permissions; `compact` folds the rarer ones. */
export function WorkspaceButtons({ ws, onChanged, compact = false }: { ws: Workspace; onChanged?: () => void; compact?: boolean }) {
  const actions = useWorkspaceActions(ws, onChanged);
  const action = useAction((name: keyof typeof actions, arg?: 'ide' | 'dev') => (arg ? actions.open(arg) : (actions[name] as () => Promise<unknown>)()));
  const [renaming, setRenaming] = useState(false);
  const use = can(ws, 'workspace.use');
  const manage = can(ws, 'workspace.delete');
  const run = (name: keyof typeof actions, arg?: 'ide' | 'dev') => () => void action.run(name, arg);
  const archived = ws.archived;

  const rare = (close: () => void) => (
    <>
      {can(ws, 'workspace.update') && (
        <Button variant="quiet" onClick={() => (close(), setRenaming(!renaming))}>
          Rename
        </Button>
      )}
      {manage && !['creating', 'cloning', 'deleting'].includes(ws.state) && (
        <ConfirmButton question={`Archive ${ws.name}? It sleeps and its files move to the archive store.`} confirmText="Archive" onConfirm={() => (close(), run('archive')())}>
          Archive
        </ConfirmButton>
      )}
      {manage && archived && (
        <Button variant="quiet" onClick={() => (close(), run('restoreArchive')())}>
          Restore archive
        </Button>
      )}
      {manage && (
        <ConfirmButton question={`Delete ${ws.name}? It can be restored for 7 days.`} confirmText="Delete" onConfirm={() => (close(), run('remove')())}>
          Delete
        </ConfirmButton>
      )}
    </>
  );
  return (
    <div className="ws-actions">
      <div className="actions">
        {action.busy && <span className="spinner" role="status" aria-label="Working" />}
        {use && ws.state !== 'deleting' && (
          <>
            <Button onClick={run('open', 'ide')} variant={ws.state === 'error' ? 'secondary' : 'primary'}>
              Open editor
            </Button>
            <Button onClick={run('open', 'dev')}>Open dev URL</Button>
          </>
        )}
        {use && ws.state === 'running' && <Button onClick={run('sleep')}>Sleep</Button>}
        {use && ws.state === 'sleeping' && <Button onClick={run('wake')}>Wake</Button>}
        {/* A failed start is tried again by waking: the pod starts afresh with the same volume. */}
        {use && ws.state === 'error' && (
          <Button onClick={run('wake')} variant="primary" title="Start the workspace's pod again">
            Retry
          </Button>
        )}
        {use && ws.state === 'stopped' && <Button onClick={run('start')}>Start</Button>}
        {compact ? (
          <Menu label={`More actions for ${ws.name}`}>{rare}</Menu>
        ) : (
          rare(() => undefined)
        )}
      </div>
      {renaming && <RenameForm ws={ws} rename={actions.rename} onDone={() => setRenaming(false)} />}
      {!compact && use && can(ws, 'workspace.update') && ws.state === 'error' && ws.git && !ws.git.cloned && <RepositoryForm ws={ws} correct={actions.correctAndRetry} />}
      <ProblemNotice problem={action.problem} onDismiss={action.clear} />
    </div>
  );
}

/** The clone failed: the address or ref may be wrong. Saved with If-Match, then Retry clones it. */
function RepositoryForm({ ws, correct }: { ws: Workspace; correct: (git: { repo: string; ref: string | null }) => Promise<unknown> }) {
  const [repo, setRepo] = useState(ws.git?.repo ?? '');
  const [ref, setRef] = useState(ws.git?.ref ?? '');
  const save = useAction(correct);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run({ repo: repo.trim(), ref: ref.trim() || null });
  };
  return (
    <form className="inline-form compact" onSubmit={submit} aria-label="Correct the repository">
      <input value={repo} onChange={(e) => setRepo(e.target.value)} required aria-label="Repository address" placeholder="https://host/owner/repo.git" />
      <input value={ref} onChange={(e) => setRef(e.target.value)} aria-label="Branch, tag or commit" placeholder="default branch" />
      <Button type="submit" variant="primary" busy={save.busy}>
        Save and retry
      </Button>
      <FieldHint problem={save.problem} pointer="/git/repo" />
      {save.problem && !save.problem.fieldError('/git/repo') && <ProblemNotice problem={save.problem} />}
    </form>
  );
}

function RenameForm({ ws, rename, onDone }: { ws: Workspace; rename: (name: string) => Promise<unknown>; onDone: () => void }) {
  const [name, setName] = useState(ws.name);
  const save = useAction(rename);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run(name.trim()).then((ok) => ok && onDone());
  };
  return (
    <form className="inline-form compact" onSubmit={submit} aria-label={`Rename ${ws.name}`}>
      <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={63} aria-label="New name" autoFocus />
      <Button type="submit" variant="primary" busy={save.busy}>
        Save
      </Button>
      <Button variant="quiet" onClick={onDone}>
        Cancel
      </Button>
      <FieldHint problem={save.problem} pointer="/name" />
      {save.problem && !save.problem.fieldError('/name') && <ProblemNotice problem={save.problem} />}
    </form>
  );
}

/** The buttons for a workspace in Recently deleted. */
export function DeletedButtons({ ws, onChanged }: { ws: Workspace; onChanged?: () => void }) {
  const actions = useWorkspaceActions(ws, onChanged);
  const restore = useAction(actions.restore);
  const purge = useAction(actions.purge);
  if (!can(ws, 'workspace.delete')) return null;
  return (
    <div className="ws-actions">
      <div className="actions">
        <Button onClick={() => void restore.run()} busy={restore.busy}>
          Restore
        </Button>
        <ConfirmButton question={`Purge ${ws.name}? Its files are gone for good.`} confirmText="Purge now" onConfirm={() => void purge.run()} busy={purge.busy}>
          Purge
        </ConfirmButton>
      </div>
      <ProblemNotice problem={restore.problem ?? purge.problem} onDismiss={() => (restore.clear(), purge.clear())} />
    </div>
  );
}
