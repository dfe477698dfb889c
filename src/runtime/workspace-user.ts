// The person a workspace's UID is named after in its pods (docs/workspaces.md, "Who you are in a workspace"), and
// the host name its pods take: derived from the owner's e-mail and the workspace's name. Pure.
import type { WorkspaceUser } from './driver.ts';

const FALLBACK_LOGIN = 'developer';

/**
 * A login name from the person's e-mail (its local part: `Ada.Lovelace+svc@example.com` → `ada-lovelace`),
 * else their name; `developer` when neither leaves a usable name.
 */
export function podLoginName(email: string | null | undefined, name?: string | null): string {
  for (const candidate of [email?.split('@')[0]?.split('+')[0], name]) {
    const login = (candidate ?? '')
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '-')
      .replace(/^[^a-z]+/, '')
      .replace(/-+/g, '-')
      .slice(0, 32)
      .replace(/-+$/, '');
    if (login) return login;
  }
  return FALLBACK_LOGIN;
}

export function podUserOf(email: string | null | undefined, name: string | null | undefined): WorkspaceUser {
  return { login: podLoginName(email, name), fullName: gecos(name || email || FALLBACK_LOGIN) };
}

/** The GECOS field: no `:`, no line breaks, no commas (they separate its parts). */
const gecos = (text: string) => text.replace(/[:,\n\r]/g, ' ').trim();

/** A host name from the workspace's name (one DNS label); `ws-<id>` when the name leaves none. */
export function podHostName(workspaceName: string | undefined, id: number): string {
  const label = (workspaceName ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return label || `ws-${id}`;
}
