// The caller's git credentials (docs/git.md): an HTTPS token or password per git host, listed with the username
// only, and the SSH key svc makes for them, shown as its public half to paste at the git host, rotated on demand.
import { useState, type FormEvent } from 'react';
import { answer, ApiProblem, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { Button, ConfirmButton, CopyButton, Empty, FieldHint, Loading, ProblemNotice, Section, Time } from '../ui.tsx';

export function GitCredentials() {
  const list = useResource(() => answer(svcApi.GET('/api/v1/me/git-credentials')).then((page) => page.items), []);
  const remove = useAction(async (host: string) => {
    await answer(svcApi.DELETE('/api/v1/me/git-credentials/{host}', { params: { path: { host } } }));
    await list.reload();
  });
  return (
    <Section title="Git credentials">
      <p className="muted">
        Tokens for git hosts over HTTPS: the clone of a workspace you create and git in the shells you open use the one for the repository's host. Kept encrypted and never shown again.
      </p>
      <ProblemNotice problem={remove.problem ?? list.error} onDismiss={remove.clear} />
      {list.loading && !list.data ? (
        <Loading what="git credentials" />
      ) : list.data?.length === 0 ? (
        <Empty>No git credentials: private repositories over HTTPS cannot be cloned yet.</Empty>
      ) : (
        <table className="table" aria-label="Git credentials">
          <thead>
            <tr>
              <th>Host</th>
              <th>Username</th>
              <th>Changed</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.data?.map((credential) => (
              <tr key={credential.host}>
                <td>
                  <code>{credential.host}</code>
                </td>
                <td>{credential.username}</td>
                <td>
                  <Time at={credential.updated_at} />
                </td>
                <td className="row-actions">
                  <ConfirmButton question={`Remove your credential for ${credential.host}?`} confirmText="Remove" onConfirm={() => void remove.run(credential.host)}>
                    Remove
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <GitCredentialForm onDone={() => void list.reload()} />
    </Section>
  );
}

function GitCredentialForm({ onDone }: { onDone: () => void }) {
  const [host, setHost] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const save = useAction(async () => {
    const named = username.trim() ? { username: username.trim() } : {};
    await answer(svcApi.POST('/api/v1/me/git-credentials', { body: { host: host.trim(), ...named, password } }));
    setHost('');
    setUsername('');
    setPassword('');
    onDone();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run();
  };
  return (
    <form className="inline-form compact" onSubmit={submit} aria-label="Add a git credential">
      <label>
        Host
        <input name="git-host" value={host} onChange={(e) => setHost(e.target.value)} required maxLength={255} placeholder="github.com" />
        <FieldHint problem={save.problem} pointer="/host" />
      </label>
      <label>
        Username
        <input name="git-username" value={username} onChange={(e) => setUsername(e.target.value)} maxLength={256} autoComplete="off" placeholder="x-access-token" />
        <FieldHint problem={save.problem} pointer="/username" />
      </label>
      <label className="grow">
        Token or password
        <input name="git-password" type="password" value={password} onChange={(e) => setPassword(e.target.value)} required maxLength={4096} autoComplete="new-password" />
        <FieldHint problem={save.problem} pointer="/password" />
      </label>
      <Button type="submit" busy={save.busy}>
        Save credential
      </Button>
      {save.problem && <ProblemNotice problem={save.problem} onDismiss={save.clear} />}
    </form>
  );
}

export function SshKey() {
  // 404 until the first key is made
  const key = useResource(
    () => answer(svcApi.GET('/api/v1/me/ssh-key')).catch((error: unknown) => (error instanceof ApiProblem && error.status === 404 ? null : Promise.reject(error))),
    [],
  );
  const make = useAction(async () => {
    await answer(svcApi.POST('/api/v1/me/ssh-key'));
    await key.reload();
  });
  return (
    <Section title="SSH key">
      <p className="muted">A key svc made for you: add its public half at your git host (GitHub: Settings → SSH and GPG keys) to clone and push over ssh. The private half never leaves svc.</p>
      <ProblemNotice problem={make.problem ?? key.error} onDismiss={make.clear} />
      {key.loading && key.data === undefined ? (
        <Loading what="the SSH key" />
      ) : key.data ? (
        <>
          <pre className="public-key" aria-label="Public key">
            {key.data.public_key}
          </pre>
          <p className="muted">
            Fingerprint <code>{key.data.fingerprint}</code>, made <Time at={key.data.created_at} />
          </p>
          <div className="row-actions">
            <CopyButton text={key.data.public_key} label="Copy public key" />
            <ConfirmButton question="Replace your SSH key? The old one stops working in svc; paste the new one at your git hosts." confirmText="Rotate" onConfirm={() => void make.run()} busy={make.busy}>
              Rotate
            </ConfirmButton>
          </div>
        </>
      ) : (
        <Button onClick={() => void make.run()} busy={make.busy}>
          Make my SSH key
        </Button>
      )}
    </Section>
  );
}
