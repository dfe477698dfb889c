// Settings → Dotfiles: your dotfiles repository (issue 34 item 3), cloned into HOME of each workspace you own at its
// first start, its install script run; a URL with a password is refused by the server (the hint says so).
import { useState, type FormEvent } from 'react';
import { answer, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { Button, ConfirmButton, FieldHint, Loading, ProblemNotice, Section } from '../ui.tsx';

export function DotfilesSettings() {
  const current = useResource(() => answer(svcApi.GET('/api/v1/me/dotfiles')), []);
  const [url, setUrl] = useState('');
  const save = useAction(async () => {
    await answer(svcApi.PUT('/api/v1/me/dotfiles', { body: { url: url.trim() } }));
    setUrl('');
    await current.reload();
  });
  const forget = useAction(async () => {
    await answer(svcApi.DELETE('/api/v1/me/dotfiles'));
    await current.reload();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run();
  };
  return (
    <Section title="Dotfiles">
      <p className="muted">
        A git repository cloned into <code>HOME</code> (<code>/data/home/.dotfiles</code>) of each workspace you own at its first start; its{' '}
        <code>install.sh</code> (or <code>install</code>, <code>bootstrap.sh</code>, <code>setup.sh</code> …) runs, its output in <code>/data/.svc/dotfiles.log</code>.
      </p>
      {current.loading && !current.data ? (
        <Loading what="your dotfiles" />
      ) : current.data?.url ? (
        <p data-testid="dotfiles-url">
          <code>{current.data.url}</code>{' '}
          <ConfirmButton question="Forget your dotfiles repository? Workspaces keep what was applied." confirmText="Forget" onConfirm={() => void forget.run()}>
            Forget
          </ConfirmButton>
        </p>
      ) : (
        <p className="muted">No dotfiles repository.</p>
      )}
      <form className="inline-form" onSubmit={submit}>
        <label>
          Repository
          <input name="dotfiles-url" value={url} onChange={(e) => setUrl(e.target.value)} maxLength={2048} required placeholder="https://github.com/you/dotfiles.git" />
          <FieldHint problem={save.problem} pointer="/url" />
        </label>
        <Button type="submit" busy={save.busy}>
          {current.data?.url ? 'Change' : 'Set'}
        </Button>
      </form>
      <ProblemNotice problem={save.problem ?? forget.problem ?? current.error} onDismiss={save.problem ? save.clear : forget.clear} />
    </Section>
  );
}
