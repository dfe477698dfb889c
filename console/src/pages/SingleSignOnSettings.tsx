// Settings → Single sign-on: the providers linked to your account, and a button to link each other one (issue 39):
// the provider's round trip comes back here with the link made; after that you may sign in with it.
import { answer, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { Button, Loading, ProblemNotice, Section, Time } from '../ui.tsx';

export function SingleSignOnSettings() {
  const providers = useResource(() => answer(svcApi.GET('/api/v1/auth/providers')), []);
  const linked = useResource(() => answer(svcApi.GET('/api/v1/me/identities')), []);
  const link = useAction(async (provider: string) => {
    const started = await answer(svcApi.POST('/api/v1/me/identities/{provider}', { params: { path: { provider } }, body: { return: '/settings' } }));
    window.location.assign(started.authorization_url);
  });
  if (!providers.data?.length) return null;
  const linkedIds = new Set((linked.data ?? []).map((identity) => identity.provider));
  const nameOf = (id: string) => providers.data?.find((p) => p.id === id)?.name ?? id;
  return (
    <Section title="Single sign-on">
      {linked.loading && !linked.data ? (
        <Loading what="your linked providers" />
      ) : (
        <ul className="plain-list" aria-label="Linked providers">
          {(linked.data ?? []).map((identity) => (
            <li key={identity.provider} data-provider={identity.provider}>
              {nameOf(identity.provider)}
              {identity.email ? ` (${identity.email})` : ''} · last sign-in <Time at={identity.last_sign_in_at} empty="never" />
            </li>
          ))}
        </ul>
      )}
      <p className="muted">Link a provider to sign in with it from now on; roles its groups give follow at each sign-in.</p>
      <div className="inline-form">
        {providers.data
          .filter((p) => !linkedIds.has(p.id))
          .map((p) => (
            <Button key={p.id} busy={link.busy} onClick={() => void link.run(p.id)}>
              Link {p.name}
            </Button>
          ))}
      </div>
      <ProblemNotice problem={link.problem ?? linked.error} onDismiss={link.clear} />
    </Section>
  );
}
