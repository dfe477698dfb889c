// A log (a service replica's, a stage step's): the last lines, and with Follow the lines as they come (the API's
// `follow=true` JSON lines). The platform's own lines (stream `system`) stand out from the program's output.
import { useEffect, useRef, useState } from 'react';
import { asProblem, followLog, logTail, type ApiProblem, type LogSource } from './api.ts';
import type { LogLine } from './types.ts';
import { Button, ProblemNotice, Spinner } from './ui.tsx';

const MAX_LINES = 5000;

/**
 * `endedBecause`: why following makes no sense any more (the service failed or finished): the view stops following,
 * shows the last lines and says why; it follows again once that clears (the service was started again).
 */
export function LogView({ source, title, onClose, followable = true, endedBecause }: { source: LogSource; title: string; onClose?: () => void; followable?: boolean; endedBecause?: string }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [follow, setFollow] = useState(followable);
  const [state, setState] = useState<'loading' | 'following' | 'idle' | 'ended'>('loading');
  const [problem, setProblem] = useState<ApiProblem>();
  const box = useRef<HTMLPreElement>(null);

  const key = JSON.stringify(source);
  const following = follow && endedBecause === undefined;
  useEffect(() => {
    const abort = new AbortController();
    setLines([]);
    setProblem(undefined);
    setState('loading');
    const add = (more: LogLine[]) => setLines((before) => [...before, ...more].slice(-MAX_LINES));
    if (following) {
      let pending: LogLine[] = [];
      let scheduled = false;
      // Lines of one burst are added together, once per frame.
      const onLine = (line: LogLine) => {
        pending.push(line);
        if (scheduled) return;
        scheduled = true;
        requestAnimationFrame(() => {
          scheduled = false;
          add(pending);
          pending = [];
        });
      };
      setState('following');
      followLog(source, onLine, abort.signal).then(
        () => !abort.signal.aborted && setState('ended'),
        (error: unknown) => !abort.signal.aborted && (setProblem(asProblem(error)), setState('idle')),
      );
    } else {
      logTail(source, 1000, abort.signal).then(
        (tail) => (add(tail), setState(follow ? 'ended' : 'idle')),
        (error: unknown) => !abort.signal.aborted && (setProblem(asProblem(error)), setState('idle')),
      );
    }
    return () => abort.abort();
  }, [key, following]);

  useEffect(() => {
    const element = box.current;
    if (element && follow) element.scrollTop = element.scrollHeight;
  }, [lines, follow]);

  return (
    <div className="log-view" aria-label={title}>
      <div className="log-head">
        <strong>{title}</strong>
        <span className="muted small">
          {state === 'following' && (
            <>
              <Spinner /> following
            </>
          )}
          {state === 'ended' && (endedBecause ? <span className="follow-ended">Follow ended: {endedBecause}</span> : 'ended')}
          {state === 'loading' && 'loading…'}
        </span>
        <div className="actions">
          {followable && (
            <label className="toggle">
              <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow
            </label>
          )}
          {onClose && (
            <Button variant="quiet" onClick={onClose}>
              Close
            </Button>
          )}
        </div>
      </div>
      <ProblemNotice problem={problem} />
      <pre className="log" ref={box} tabIndex={0}>
        {lines.length === 0 && state !== 'loading' ? (
          <span className="muted">No lines yet.</span>
        ) : (
          lines.map((line) => (
            <span key={line.seq} className={`line ${line.stream}`}>
              <span className="at">{new Date(line.at).toLocaleTimeString()}</span>
              {line.text}
              {'\n'}
            </span>
          ))
        )}
      </pre>
    </div>
  );
}
