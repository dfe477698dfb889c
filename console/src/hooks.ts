// Reading the API from components: a resource is loaded once, then re-read after every `ready` of the event stream
// and on the events that concern it. Re-reads never overlap: one that is asked for during a read runs after it.
import { useCallback, useEffect, useRef, useState, type DependencyList } from 'react';
import { ApiProblem, asProblem } from './api.ts';
import { events, type LinkState } from './events.ts';
import type { SvcEvent } from './types.ts';

/** Calls `handler` for every event of the stream (the latest handler, without re-subscribing). */
export function useEvents(handler: (event: SvcEvent) => void): void {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => events.subscribe((event) => latest.current(event)), []);
}

export function useLinkState(): LinkState {
  const [state, setState] = useState(events.state);
  useEffect(() => events.onState(setState), []);
  return state;
}

export interface Resource<T> {
  data?: T;
  error?: ApiProblem;
  loading: boolean;
  reload: () => Promise<void>;
}

/**
 * `load` read now, again when `deps` change, after every `ready`, and on each event for which `refreshOn` answers
 * true. A failed re-read keeps the last data and reports the problem beside it.
 */
export function useResource<T>(load: () => Promise<T>, deps: DependencyList, refreshOn?: (event: SvcEvent) => boolean): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiProblem; loading: boolean }>({ loading: true });
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);
  const flight = useRef<{ generation: number; again: boolean } | null>(null);

  const reload = useCallback(async () => {
    const mine = generation.current;
    if (flight.current?.generation === mine) {
      flight.current.again = true;
      return;
    }
    const run = { generation: mine, again: true };
    flight.current = run;
    while (run.again && mine === generation.current) {
      run.again = false;
      try {
        const data = await latest.current();
        if (mine === generation.current) setState({ data, loading: false });
      } catch (error) {
        if (mine === generation.current) setState((before) => ({ data: before.data, error: asProblem(error), loading: false }));
      }
    }
    if (flight.current === run) flight.current = null;
  }, []);

  useEffect(() => {
    generation.current += 1;
    setState({ loading: true });
    void reload();
  }, deps);

  const refresh = useRef(refreshOn);
  refresh.current = refreshOn;
  useEvents((event) => {
    if (event.type === 'ready' || event.type === 'access.changed' || refresh.current?.(event)) void reload();
  });
  return { ...state, reload };
}

/** Runs an action, keeping its pending state and its problem for the form or button that started it. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem>();
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  const run = useCallback(
    async (...args: A): Promise<boolean> => {
      setBusy(true);
      setProblem(undefined);
      try {
        await action(...args);
        return true;
      } catch (error) {
        if (mounted.current) setProblem(asProblem(error));
        return false;
      } finally {
        if (mounted.current) setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, problem, clear: () => setProblem(undefined) };
}
