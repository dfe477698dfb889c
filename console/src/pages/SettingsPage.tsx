// Settings: the account, personal API keys (with an expiry; a new key's token is shown once, with a copy button),
// single sign-on providers linked (SingleSignOnSettings.tsx), git credentials and the SSH key (GitCredentials.tsx),
// the dotfiles repository and the password.
import { useState, type FormEvent } from 'react';
import { answer, listAll, svcApi } from '../api.ts';
import { useMe } from '../App.tsx';
import { useAction, useResource } from '../hooks.ts';
import { GitCredentials, SshKey } from './GitCredentials.tsx';
import type { ApiKeyWithToken } from '../types.ts';
import { DotfilesSettings } from './DotfilesSettings.tsx';
import { SingleSignOnSettings } from './SingleSignOnSettings.tsx';
import { Button, ConfirmButton, CopyButton, Empty, FieldHint, Loading, ProblemNotice, Section, Time } from '../ui.tsx';

/** Lifetimes offered for a new key, in days (0: never); the API takes at most a year. */
const KEY_LIFETIMES: [string, string][] = [
  ['7', 'in 7 days'],
  ['30', 'in 30 days'],
  ['90', 'in 90 days'],
  ['365', 'in a year'],
  ['0', 'never'],
];

export function SettingsPage() {
  const me = useMe();
  return (
    <>
      <h1>Settings</h1>
      <Section title="Account">
        <dl className="facts">
          <dt>Name</dt>
          <dd>{me.name}</dd>
          <dt>E-mail</dt>
          <dd>{me.email}</dd>
          <dt>Role</dt>
          <dd>{me.permissions.includes('platform.admin') ? 'Administrator of this installation' : 'Member'}</dd>
        </dl>
      </Section>
      <SingleSignOnSettings />
      <ApiKeys />
      <GitCredentials />
      <SshKey />
      <DotfilesSettings />
      <PasswordForm hasPassword={me.has_password} />
    </>
  );
}

function ApiKeys() {
  const keys = useResource(() => listAll((page) => svcApi.GET('/api/v1/me/api-keys', { params: { query: page } })), []);
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState('90');
  const [created, setCreated] = useState<ApiKeyWithToken>();
  const create = useAction(async () => {
    const days = Number(expiry);
    const expires = days > 0 ? { expires_at: new Date(Date.now() + days * 86_400_000).toISOString() } : {};
    const key = await answer(svcApi.POST('/api/v1/me/api-keys', { body: { name: name.trim(), ...expires } }));
    setCreated(key);
    setName('');
    await keys.reload();
  });
  const remove = useAction(async (id: string) => {
    await answer(svcApi.DELETE('/api/v1/me/api-keys/{key}', { params: { path: { key: id } } }));
    if (created?.id === id) setCreated(undefined);
    await keys.reload();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run();
  };

  return (
    <Section title="API keys">
      <p className="muted">
        A key acts as you, with your roles, for the <code>svc</code> command line and scripts: send it as <code>Authorization: Bearer svc_…</code>.
      </p>
      <form className="inline-form" onSubmit={submit}>
        <label>
          Name
          <input name="key-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required placeholder="laptop, CI, …" />
          <FieldHint problem={create.problem} pointer="/name" />
        </label>
        <label>
          Expires
          <select name="key-expiry" value={expiry} onChange={(e) => setExpiry(e.target.value)}>
            {KEY_LIFETIMES.map(([days, text]) => (
              <option key={days} value={days}>
                {text}
              </option>
            ))}
          </select>
          <FieldHint problem={create.problem} pointer="/expires_at" />
        </label>
        <Button type="submit" variant="primary" busy={create.busy}>
          Create key
        </Button>
      </form>
      <ProblemNotice problem={create.problem} onDismiss={create.clear} />
      {created && (
        <div className="token-box" role="status" aria-label="New API key">
          <p>
            <strong>Copy the key “{created.name}” now.</strong> It is shown only this once; afterwards only its prefix is known.{' '}
            {created.expires_at ? (
              <>
                It stops working <Time at={created.expires_at} /> ({new Date(created.expires_at).toLocaleDateString()}).
              </>
            ) : (
              'It never expires: delete it when it is no longer needed.'
            )}
          </p>
          <div className="token-row">
            <code className="token" data-testid="new-token">
              {created.token}
            </code>
            <CopyButton text={created.token} />
          </div>
          <Button variant="quiet" onClick={() => setCreated(undefined)}>
            I have copied it
          </Button>
        </div>
      )}
      <ProblemNotice problem={remove.problem ?? keys.error} onDismiss={remove.clear} />
      {keys.loading && !keys.data ? (
        <Loading what="your keys" />
      ) : keys.data?.length === 0 ? (
        <Empty>No API keys yet.</Empty>
      ) : (
        <table className="table" aria-label="API keys">
          <thead>
            <tr>
              <th>Name</th>
              <th>Prefix</th>
              <th>Made by</th>
              <th>Created</th>
              <th>Last used</th>
              <th>Expires</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.data?.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.prefix}…</code>
                </td>
                <td>{key.source === 'cli' ? 'svc login' : 'console'}</td>
                <td>
                  <Time at={key.created_at} />
                </td>
                <td>
                  <Time at={key.last_used_at} empty="never" />
                </td>
                <td>
                  <Time at={key.expires_at} empty="never" />
                </td>
                <td className="row-actions">
                  <ConfirmButton question={`Delete “${key.name}”? It stops working at once.`} confirmText="Delete key" onConfirm={() => void remove.run(key.id)}>
                    Delete
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

function PasswordForm({ hasPassword }: { hasPassword: boolean }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const save = useAction(async () => {
    await answer(svcApi.PUT('/api/v1/me/password', { body: hasPassword || current ? { current_password: current, new_password: next } : { new_password: next } }));
    setCurrent('');
    setNext('');
    setDone(true);
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setDone(false);
    void save.run();
  };
  return (
    <Section title="Password">
      <p className="muted">{hasPassword || done ? 'Change the password you sign in with.' : 'Set a password to sign in with your e-mail instead of a link.'}</p>
      <form className="inline-form" onSubmit={submit}>
        {(hasPassword || done) && (
          <label>
            Current password
            <input type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} required />
            <FieldHint problem={save.problem} pointer="/current_password" />
          </label>
        )}
        <label>
          New password
          <input type="password" autoComplete="new-password" minLength={8} value={next} onChange={(e) => setNext(e.target.value)} required />
          <FieldHint problem={save.problem} pointer="/new_password" />
        </label>
        <Button type="submit" busy={save.busy}>
          {hasPassword || done ? 'Change password' : 'Set password'}
        </Button>
      </form>
      <ProblemNotice problem={save.problem} onDismiss={save.clear} />
      {done && <p className="success">The password is saved.</p>}
    </Section>
  );
}
