// A team's container registry credentials (docs/images.md): pulls of the team's private images from a registry
// host use them. Listed with the username only; the password is never shown again. Team admins change them.
import { useState, type FormEvent } from 'react';
import { answer, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import type { Team } from '../types.ts';
import { Button, ConfirmButton, Empty, FieldHint, Loading, ProblemNotice, Section, Time } from '../ui.tsx';

export function RegistryCredentials({ team }: { team: Team }) {
  const manage = team.permissions.includes('team.update');
  const path = { team: team.id };
  const list = useResource(() => answer(svcApi.GET('/api/v1/teams/{team}/registry-credentials', { params: { path } })).then((page) => page.items), [team.id], (e) => e.type === 'team.updated' && e.team_id === team.id);
  const remove = useAction(async (registry: string) => {
    await answer(svcApi.DELETE('/api/v1/teams/{team}/registry-credentials/{registry}', { params: { path: { ...path, registry } } }));
    await list.reload();
  });

  return (
    <Section title="Container registries">
      <p className="muted">Credentials for private images: a pull from a registry host listed here signs in with them. Passwords are kept encrypted and never shown again.</p>
      <ProblemNotice problem={remove.problem ?? list.error} onDismiss={remove.clear} />
      {list.loading && !list.data ? (
        <Loading what="registry credentials" />
      ) : list.data?.length === 0 ? (
        <Empty>No registry credentials: images are pulled anonymously.</Empty>
      ) : (
        <table className="table" aria-label="Registry credentials">
          <thead>
            <tr>
              <th>Registry</th>
              <th>Username</th>
              <th>Changed</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.data?.map((credential) => (
              <tr key={credential.registry}>
                <td>
                  <code>{credential.registry}</code>
                </td>
                <td>{credential.username}</td>
                <td>
                  <Time at={credential.updated_at} />
                </td>
                <td className="row-actions">
                  {manage && (
                    <ConfirmButton question={`Remove the credentials for ${credential.registry}?`} confirmText="Remove" onConfirm={() => void remove.run(credential.registry)}>
                      Remove
                    </ConfirmButton>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {manage && <CredentialForm team={team} onDone={() => void list.reload()} />}
    </Section>
  );
}

function CredentialForm({ team, onDone }: { team: Team; onDone: () => void }) {
  const [registry, setRegistry] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const save = useAction(async () => {
    await answer(svcApi.POST('/api/v1/teams/{team}/registry-credentials', { params: { path: { team: team.id } }, body: { registry: registry.trim(), username: username.trim(), password } }));
    setRegistry('');
    setUsername('');
    setPassword('');
    onDone();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run();
  };
  return (
    <form className="inline-form compact" onSubmit={submit} aria-label="Add registry credentials">
      <label>
        Registry
        <input value={registry} onChange={(e) => setRegistry(e.target.value)} required maxLength={255} placeholder="registry.example.com:5000" />
        <FieldHint problem={save.problem} pointer="/registry" />
      </label>
      <label>
        Username
        <input value={username} onChange={(e) => setUsername(e.target.value)} required maxLength={256} autoComplete="off" />
        <FieldHint problem={save.problem} pointer="/username" />
      </label>
      <label className="grow">
        Password or token
        <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} required maxLength={4096} autoComplete="new-password" />
        <FieldHint problem={save.problem} pointer="/password" />
      </label>
      <Button type="submit" busy={save.busy}>
        Save credentials
      </Button>
      {save.problem && <ProblemNotice problem={save.problem} onDismiss={save.clear} />}
    </form>
  );
}
