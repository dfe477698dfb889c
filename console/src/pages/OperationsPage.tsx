// Operations (2.4): the history the API keeps (every operation you can see, 7 days after it finished), newest first,
// filtered by state, kind and team in the address (?state=failed&kind=landscape.sync&team=3), read again as
// `operation.updated` events arrive; "Show older" follows the pages.
import { useState } from 'react';
import { answer, listAll, svcApi } from '../api.ts';
import { useResource } from '../hooks.ts';
import { operationKinds } from '../labels.ts';
import { operationFilters, OperationRow, rememberWorkspaces } from '../operations.tsx';
import { setQuery, useLocation } from '../router.tsx';
import type { Operation } from '../types.ts';
import { Button, Empty, Loading, ProblemNotice, Section } from '../ui.tsx';

const STATES: [string, string][] = [
  ['', 'Any state'],
  ['running', 'Running'],
  ['pending', 'Waiting'],
  ['failed', 'Failed'],
  ['succeeded', 'Done'],
];

export function OperationsPage() {
  const query = useLocation().query;
  const filters = { state: query.get('state') ?? '', kind: query.get('kind') ?? '', team: query.get('team') ?? '' };
  const search = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ''));
  const teams = useResource(() => listAll((page) => svcApi.GET('/api/v1/teams', { params: { query: page } })), []);
  const [older, setOlder] = useState<{ items: Operation[]; cursor?: string }>({ items: [] });
  // Names of the workspaces the operations act on, so each row can say which one (read once; a re-render follows).
  useResource(() => listAll((page) => svcApi.GET('/api/v1/workspaces', { params: { query: page } })).then(rememberWorkspaces), []);
  const history = useResource(
    () => answer(svcApi.GET('/api/v1/operations', { params: { query: { limit: 50, ...operationFilters(filters) } } })),
    [search.toString()],
    (event) => event.type === 'operation.updated',
  );
  const [moreBusy, setMoreBusy] = useState(false);
  const cursor = older.cursor ?? (older.items.length === 0 ? history.data?.next_cursor : undefined);
  const showOlder = async () => {
    if (!cursor) return;
    setMoreBusy(true);
    try {
      const page = await answer(svcApi.GET('/api/v1/operations', { params: { query: { limit: 50, cursor, ...operationFilters(filters) } } }));
      setOlder((before) => ({ items: [...before.items, ...page.items], cursor: page.next_cursor }));
    } finally {
      setMoreBusy(false);
    }
  };
  const filter = (name: string, value: string) => {
    setOlder({ items: [] });
    setQuery(name, value || undefined);
  };
  const shown = [...(history.data?.items ?? []), ...older.items.filter((o) => !history.data?.items.some((h) => h.id === o.id))];
  const moreLeft = older.items.length > 0 ? older.cursor !== undefined : history.data?.next_cursor !== undefined;

  return (
    <>
      <h1>Operations</h1>
      <Section title="History" actions={<span className="muted small">Kept 7 days after they finish</span>}>
        <form className="inline-form filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
          <label>
            State
            <select value={filters.state} onChange={(e) => filter('state', e.target.value)}>
              {STATES.map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
          </label>
          <label>
            Kind
            <select value={filters.kind} onChange={(e) => filter('kind', e.target.value)}>
              <option value="">Any kind</option>
              {Object.entries(operationKinds).map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
          </label>
          {(teams.data?.length ?? 0) > 1 && (
            <label>
              Team
              <select value={filters.team} onChange={(e) => filter('team', e.target.value)}>
                <option value="">Every team</option>
                {teams.data!.map((team) => (
                  <option key={team.id} value={team.id}>
                    {team.name}
                  </option>
                ))}
              </select>
            </label>
          )}
        </form>
        <ProblemNotice problem={history.error} />
        {history.loading && !history.data ? (
          <Loading what="operations" />
        ) : shown.length === 0 ? (
          <Empty>{search.size ? 'No operation matches these filters.' : 'No operations in the last 7 days.'}</Empty>
        ) : (
          <ul className="operations" aria-label="Operations">
            {shown.map((operation) => (
              <OperationRow key={operation.id} operation={operation} />
            ))}
          </ul>
        )}
        {moreLeft && (
          <div className="actions">
            <Button onClick={() => void showOlder()} busy={moreBusy}>
              Show older
            </Button>
          </div>
        )}
      </Section>
    </>
  );
}
