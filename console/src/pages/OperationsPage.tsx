// Operations: what runs now with its progress text (live through `operation.updated`), and how the operations seen
// since this console was opened ended. The API keeps each operation readable for 7 days after it finishes.
import { finished, OperationRow, useOperations } from '../operations.tsx';
import { Empty, Section } from '../ui.tsx';

export function OperationsPage() {
  const { list } = useOperations();
  const running = list.filter((o) => !finished(o));
  const done = list.filter(finished);
  return (
    <>
      <h1>Operations</h1>
      <Section title="Under way">
        {running.length === 0 ? (
          <Empty>Nothing runs right now.</Empty>
        ) : (
          <ul className="operations" aria-label="Operations under way">
            {running.map((operation) => (
              <OperationRow key={operation.id} operation={operation} />
            ))}
          </ul>
        )}
      </Section>
      <Section title="Finished">
        {done.length === 0 ? (
          <Empty>No operation has finished since this page was opened.</Empty>
        ) : (
          <ul className="operations" aria-label="Finished operations">
            {done.map((operation) => (
              <OperationRow key={operation.id} operation={operation} />
            ))}
          </ul>
        )}
      </Section>
    </>
  );
}
