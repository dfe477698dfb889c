// Environment variables (values shown) and secrets (never shown again once set) of a workspace. A Sync fills them
// into the services' `env`; the landscape banner says when they changed since the last Sync.
import { useState, type FormEvent } from 'react';
import { answer, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import type { Secret, Variable, Workspace } from '../types.ts';
import { Button, ConfirmButton, Empty, FieldHint, Loading, ProblemNotice, Section, Time } from '../ui.tsx';

type Kind = 'variables' | 'secrets';

export function VariablesTab({ ws }: { ws: Workspace }) {
  const manage = ws.permissions?.includes('variables.manage') ?? false;
  return (
    <>
      <Entries ws={ws} kind="variables" manage={manage} />
      <Entries ws={ws} kind="secrets" manage={manage} />
    </>
  );
}

function Entries({ ws, kind, manage }: { ws: Workspace; kind: Kind; manage: boolean }) {
  const list = useResource(() => answer(svcApi.GET(`/api/v1/workspaces/{ws}/${kind}`, { params: { path: { ws: ws.id } } })).then((page): (Variable | Secret)[] => page.items), [ws.id, kind]);
  const [editing, setEditing] = useState<string>();
  const remove = useAction(async (name: string) => {
    await answer(svcApi.DELETE(`/api/v1/workspaces/{ws}/${kind}/{name}`, { params: { path: { ws: ws.id, name } } }));
    await list.reload();
  });
  const secret = kind === 'secrets';

  return (
    <Section title={secret ? 'Secrets' : 'Environment variables'}>
      <p className="muted">
        {secret
          ? 'Kept encrypted in the workspace’s vault; services read them as ${{ secrets.NAME }}. Values are never shown again.'
          : 'Services read them as ${{ env.NAME }}; prepare and test steps get them in their environment. Names starting with SVC_ are reserved.'}
      </p>
      <ProblemNotice problem={remove.problem ?? list.error} onDismiss={remove.clear} />
      {list.loading && !list.data ? (
        <Loading what={secret ? 'secrets' : 'variables'} />
      ) : list.data?.length === 0 ? (
        <Empty>{secret ? 'No secrets yet.' : 'No variables yet.'}</Empty>
      ) : (
        <table className="table" aria-label={secret ? 'Secrets' : 'Variables'}>
          <thead>
            <tr>
              <th>Name</th>
              <th>Value</th>
              <th>Changed</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.data?.map((entry) => (
              <tr key={entry.name}>
                <td>
                  <code>{entry.name}</code>
                </td>
                <td>
                  {editing === entry.name ? (
                    <EntryForm ws={ws} kind={kind} name={entry.name} initial={'value' in entry ? entry.value : ''} onDone={() => (setEditing(undefined), void list.reload())} />
                  ) : 'value' in entry ? (
                    <code className="value">{entry.value}</code>
                  ) : (
                    <span className="muted">hidden</span>
                  )}
                </td>
                <td>
                  <Time at={entry.updated_at} />
                </td>
                <td className="row-actions">
                  {manage && editing !== entry.name && (
                    <>
                      <Button variant="quiet" onClick={() => setEditing(entry.name)}>
                        {secret ? 'Set new value' : 'Edit'}
                      </Button>
                      <ConfirmButton question={`Delete ${entry.name}?`} confirmText="Delete" onConfirm={() => void remove.run(entry.name)}>
                        Delete
                      </ConfirmButton>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {manage && <EntryForm ws={ws} kind={kind} onDone={() => void list.reload()} />}
    </Section>
  );
}

/** Adds an entry (no `name`) or sets a new value of entry `name`. */
function EntryForm({ ws, kind, name: fixed, initial = '', onDone }: { ws: Workspace; kind: Kind; name?: string; initial?: string; onDone: () => void }) {
  const [name, setName] = useState(fixed ?? '');
  const [value, setValue] = useState(initial);
  const save = useAction(async () => {
    await answer(svcApi.PUT(`/api/v1/workspaces/{ws}/${kind}/{name}`, { params: { path: { ws: ws.id, name: name.trim() } }, body: { value } }));
    if (!fixed) {
      setName('');
      setValue('');
    }
    onDone();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run();
  };
  const secret = kind === 'secrets';
  return (
    <form className="inline-form compact" onSubmit={submit} aria-label={fixed ? `New value of ${fixed}` : secret ? 'Add a secret' : 'Add a variable'}>
      {!fixed && (
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} pattern="[A-Za-z_][A-Za-z0-9_]*" data-format="Use letters, digits and underscores, not starting with a digit (for example API_URL)." placeholder="NAME" />
          <FieldHint problem={save.problem} pointer="/name" />
        </label>
      )}
      <label className="grow">
        {fixed ? <span className="sr-only">Value</span> : 'Value'}
        <input type={secret ? 'password' : 'text'} value={value} onChange={(e) => setValue(e.target.value)} autoComplete="off" maxLength={65536} />
        <FieldHint problem={save.problem} pointer="/value" />
      </label>
      <Button type="submit" variant={fixed ? 'primary' : 'secondary'} busy={save.busy}>
        {fixed ? 'Save' : secret ? 'Add secret' : 'Add variable'}
      </Button>
      {fixed && (
        <Button variant="quiet" onClick={onDone}>
          Cancel
        </Button>
      )}
      {save.problem && <ProblemNotice problem={save.problem} onDismiss={save.clear} />}
    </form>
  );
}
