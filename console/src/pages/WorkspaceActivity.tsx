// What keeps the workspace awake (issue 40): the activity line in the reader's time ("Asleep since 14:02: nobody
// used it for 30 min; last use: dev URL 13:31") and its keep-awake with who asked, to ask for or end.
import { useState } from 'react';
import { answer, svcApi } from '../api.ts';
import { useAction } from '../hooks.ts';
import { useKindLabels } from '../../../sdk/src/index.ts';
import type { Workspace } from '../types.ts';
import { Button, ProblemNotice } from '../ui.tsx';

type Activity = NonNullable<Workspace['activity']>;


/** `14:02`, or with the date when it is not today. */
function clock(iso: string): string {
  const at = new Date(iso);
  const time = at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return at.toDateString() === new Date().toDateString() ? time : `${at.toLocaleDateString()} ${time}`;
}

/** The activity sentence in the reader's time zone, from the fields (the API's `text` says it in UTC). */
export function activityLine(state: string, activity: Activity): string {
  // an action names itself (wake, start, keep-awake); other kinds by their name, as in "dev URL 13:31"
  const kind = activity.last_use_kind === 'action' && activity.last_use_address ? activity.last_use_address : (activity.last_use_kind ? useKindLabels[activity.last_use_kind] : undefined);
  const last = activity.last_use_at && activity.last_use_kind ? `last use: ${kind} ${clock(activity.last_use_at)}` : 'no use recorded';
  if (state === 'sleeping') return `Asleep${activity.asleep_since ? ` since ${clock(activity.asleep_since)}` : ''}: ${activity.asleep_reason_text ?? 'put to sleep'}; ${last}`;
  if (state === 'running' && activity.sleeps_at) return `Awake: sleeps at ${clock(activity.sleeps_at)} if nobody uses it; ${last}`;
  return `${last.charAt(0).toUpperCase()}${last.slice(1)}`;
}

const durations: Array<[number, string]> = [
  [3600, '1 hour'],
  [2 * 3600, '2 hours'],
  [4 * 3600, '4 hours'],
  [8 * 3600, '8 hours'],
  [24 * 3600, '24 hours'],
];

/** The facts rows (dt/dd) of the workspace page: Activity, and Kept awake with its buttons. */
export function WorkspaceActivityFacts({ ws, onChanged }: { ws: Workspace; onChanged: () => void }) {
  const [seconds, setSeconds] = useState(2 * 3600);
  const path = { ws: ws.id };
  const keep = useAction(() => answer(svcApi.POST('/api/v1/workspaces/{ws}/keep-awake', { params: { path }, body: { for_seconds: seconds } })).then(onChanged));
  const end = useAction(() => answer(svcApi.DELETE('/api/v1/workspaces/{ws}/keep-awake', { params: { path } })).then(onChanged));
  const mayUse = ws.permissions?.includes('workspace.use') ?? false;
  const keepable = ['running', 'waking_up', 'creating', 'cloning'].includes(ws.state);
  if (!ws.activity) return null;
  return (
    <>
      <dt>Activity</dt>
      <dd data-testid="workspace-activity" title={ws.activity.text}>
        {activityLine(ws.state, ws.activity)}
      </dd>
      {(ws.keep_awake || (mayUse && keepable)) && (
        <>
          <dt>Kept awake</dt>
          <dd data-testid="keep-awake">
            {ws.keep_awake ? (
              <>
                until {clock(ws.keep_awake.until)}
                {ws.keep_awake.asked_by_email && <span className="muted"> (asked by {ws.keep_awake.asked_by_email})</span>}{' '}
                {mayUse && (
                  <Button variant="quiet" busy={end.busy} onClick={() => void end.run()}>
                    End
                  </Button>
                )}
              </>
            ) : (
              <>
                <span className="muted">no</span>{' '}
                <select aria-label="Keep awake for" value={seconds} onChange={(e) => setSeconds(Number(e.target.value))}>
                  {durations.map(([value, label]) => (
                    <option key={value} value={value}>
                      {label}
                    </option>
                  ))}
                </select>{' '}
                <Button busy={keep.busy} onClick={() => void keep.run()} title="For background work: the idle timeout does not put it to sleep until then">
                  Keep awake
                </Button>
              </>
            )}
            <ProblemNotice problem={keep.problem ?? end.problem} />
          </dd>
        </>
      )}
    </>
  );
}
