// One workspace: its state and status text (live), its addresses, its actions and operations, and tabs for the
// landscape, the stages, the variables and secrets, and a terminal (for those with workspace.exec).
import { lazy, Suspense } from 'react';
import { answer, svcApi } from '../api.ts';
import { useResource } from '../hooks.ts';
import { NEEDS_OWNER, labelOf, workspaceStates } from '../labels.ts';
import { OperationRow, rememberWorkspaces, useOperations } from '../operations.tsx';
import { Link, setQuery, useLocation } from '../router.tsx';
import type { EditorInfo } from '../types.ts';
import { Badge, CopyButton, Empty, Loading, ProblemNotice, Tabs, Time } from '../ui.tsx';
import { DeletedButtons, WorkspaceButtons } from '../workspace-actions.tsx';
import { LandscapeTab } from './LandscapeTab.tsx';
import { WorkspaceOwnership } from './OwnerTransfers.tsx';
import { StagesTab } from './StagesTab.tsx';
import { VariablesTab } from './VariablesTab.tsx';
import { WorkspaceActivityFacts } from './WorkspaceActivity.tsx';
import { WorkspaceTimings } from './WorkspaceTimings.tsx';

type Tab = 'landscape' | 'stages' | 'variables' | 'terminal';
const TABS: [Tab, string][] = [
  ['landscape', 'Landscape'],
  ['stages', 'Stages'],
  ['variables', 'Variables & secrets'],
  ['terminal', 'Terminal'],
];
// xterm.js is loaded with the tab that needs it.
const TerminalTab = lazy(() => import('./TerminalTab.tsx'));

/** Which editor runs, for people: code-server with its version, or the built-in one and why. */
function editorText(editor: EditorInfo): string {
  if (editor.kind === 'code-server') return `code-server${editor.version ? ` ${editor.version}` : ''} (VS Code in the browser)`;
  if (editor.kind === 'command') return 'The editor the operator configured';
  return 'The built-in editor (a fallback: a file tree and a text editor)';
}

/** The one-line ssh command and the VS Code link (after `svc config-ssh`, docs/cli.md). */
function SshFacts({ id }: { id: number }) {
  const host = useResource(() => answer(svcApi.GET('/api/v1/workspaces/{ws}/ssh-host', { params: { path: { ws: id } } })), [id]);
  if (!host.data) return null;
  return (
    <>
      <dt>SSH</dt>
      <dd className="address" data-testid="ssh-command">
        <code>{host.data.command}</code> <CopyButton text={host.data.command} title="Copy the ssh command" variant="quiet" />{' '}
        <a href={host.data.vscode_url}>Open in VS Code</a> <span className="muted small">— after <code>svc config-ssh</code></span>
      </dd>
    </>
  );
}

export function WorkspacePage({ id }: { id: number }) {
  const ws = useResource(() => answer(svcApi.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: id } } })).then((w) => (rememberWorkspaces([w]), w)), [id], (e) => e.workspace_id === id && e.type.startsWith('workspace.'));
  const { visible, dismiss } = useOperations();
  const operations = visible.filter((o) => o.target === `/workspaces/${id}`).slice(0, 3);
  const wanted = useLocation().query.get('tab') as Tab | null;
  const mayExec = ws.data?.permissions?.includes('workspace.exec') ?? false;
  const tabs = TABS.filter(([t]) => t !== 'terminal' || mayExec);
  const tab = tabs.some(([t]) => t === wanted) ? wanted! : 'landscape';

  if (ws.loading && !ws.data) return <Loading what="the workspace" />;
  if (!ws.data) {
    return (
      <Empty>
        <h1>Workspace not found</h1>
        <ProblemNotice problem={ws.error} />
        <p>
          It does not exist (any more), or you cannot see it. <Link to="/">Back to the workspaces</Link>
        </p>
      </Empty>
    );
  }
  const workspace = ws.data;
  const deleted = workspace.deleted_at !== undefined;
  return (
    <>
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to={`/?team=${workspace.team_id}`}>Workspaces</Link> <span aria-hidden="true">›</span> {workspace.name}
      </nav>
      <header className="ws-head">
        <div>
          <h1>{workspace.name}</h1>
          <div className="state" data-testid="workspace-state">
            <Badge label={labelOf(workspaceStates, workspace.state)} />
            {workspace.needs_owner && <Badge label={NEEDS_OWNER} title="Its owner left the team; a team admin can offer it to a member" />}
            <span className="status-text">{workspace.status_detail}</span>
          </div>
        </div>
        {deleted ? <DeletedButtons ws={workspace} onChanged={() => void ws.reload()} /> : <WorkspaceButtons ws={workspace} onChanged={() => void ws.reload()} />}
      </header>
      <ProblemNotice problem={ws.error} />
      {operations.length > 0 && (
        <ul className="ws-operations" aria-label="Operations on this workspace">
          {operations.map((operation) => (
            <OperationRow key={operation.id} operation={operation} onDismiss={() => dismiss(operation.id)} />
          ))}
        </ul>
      )}
      <dl className="facts wide">
        <dt>Source</dt>
        <dd>{workspace.git ? <code>{workspace.git.repo}{workspace.git.ref ? ` @ ${workspace.git.ref}` : ''}</code> : 'Empty workspace'}</dd>
        <dt>Editor URL</dt>
        <dd className="address">
          <code>{workspace.urls.ide}</code> <CopyButton text={workspace.urls.ide} title="Copy the editor URL" variant="quiet" />
        </dd>
        {workspace.editor && (
          <>
            <dt>Editor</dt>
            <dd data-testid="editor-kind" data-kind={workspace.editor.kind}>
              {editorText(workspace.editor)} <span className="muted small">— {workspace.editor.reason}</span>
            </dd>
          </>
        )}
        <dt>Dev URL</dt>
        <dd className="address">
          <code>{workspace.urls.dev}</code> <CopyButton text={workspace.urls.dev} title="Copy the dev URL" variant="quiet" />
        </dd>
        {!deleted && mayExec && <SshFacts id={workspace.id} />}
        <dt>Plan</dt>
        <dd>{workspace.plan}</dd>
        <dt>Storage</dt>
        <dd>
          {workspace.storage_gib} GiB
          {workspace.disk_usage && <DiskUsage usage={workspace.disk_usage} />}
        </dd>
        <dt>Sleeps after</dt>
        <dd>{workspace.idle_timeout_minutes} minutes unused</dd>
        {!deleted && <WorkspaceActivityFacts ws={workspace} onChanged={() => void ws.reload()} />}
        <dt>Created</dt>
        <dd>
          <Time at={workspace.created_at} />
        </dd>
        {workspace.last_archived_at && (
          <>
            <dt>Last archived</dt>
            <dd>
              <Time at={workspace.last_archived_at} />
            </dd>
          </>
        )}
        {deleted && (
          <>
            <dt>Deleted</dt>
            <dd>
              <Time at={workspace.deleted_at} />; purged <Time at={workspace.purge_after} />
            </dd>
          </>
        )}
      </dl>
      {!deleted && <WorkspaceTimings ws={workspace} />}
      {!deleted && <WorkspaceOwnership ws={workspace} onChanged={() => void ws.reload()} />}
      {!deleted && (
        <>
          <Tabs tabs={tabs} current={tab} onSelect={(t) => setQuery('tab', t === 'landscape' ? undefined : t)} />
          {tab === 'landscape' && <LandscapeTab ws={workspace} />}
          {tab === 'stages' && <StagesTab ws={workspace} />}
          {tab === 'variables' && <VariablesTab ws={workspace} />}
          {tab === 'terminal' && (
            <Suspense fallback={<Loading what="the terminal" />}>
              <TerminalTab ws={workspace} />
            </Suspense>
          )}
        </>
      )}
    </>
  );
}

/** How full the volume is; a warning from 90 % (spec 7: over 100 % Sync and prepare are refused). */
function DiskUsage({ usage }: { usage: { bytes: number; limit_bytes: number; percent: number } }) {
  const level = usage.percent > 100 ? 'over' : usage.percent >= 90 ? 'warn' : 'ok';
  const used = (usage.bytes / 2 ** 30).toFixed(1);
  return (
    <div className={`disk-usage disk-usage-${level}`} data-testid="disk-usage" data-level={level}>
      <progress max={100} value={Math.min(100, usage.percent)} aria-label="Disk usage" />
      <span className="small">
        {used} GiB used ({usage.percent} %)
        {level === 'warn' && ' — almost full: free space before it blocks Sync and prepare'}
        {level === 'over' && ' — over its size: Sync and prepare are refused until space is freed'}
      </span>
    </div>
  );
}
