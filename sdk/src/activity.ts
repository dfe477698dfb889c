// The words people read for each kind of use of a workspace (docs/workspaces.md "Sleep and what keeps a workspace
// awake"), the same as the server's activity sentence (src/workspaces/activity.ts) says them.
import type { Workspace } from './resources.ts';

type UseKind = NonNullable<NonNullable<Workspace['activity']>['last_use_kind']>;

export const useKindLabels: Record<UseKind, string> = {
  'dev-url': 'dev URL',
  'service-address': 'service address',
  'custom-domain': 'custom domain',
  editor: 'editor',
  terminal: 'terminal',
  ssh: 'ssh',
  exec: 'exec',
  'port-forward': 'port-forward',
  action: 'action',
};
