// Registry authentication (the distribution spec's token flow): a 401 names a scheme in WWW-Authenticate; for
// Bearer, a token comes from the realm, asked with basic credentials when there are some; Basic is sent as is.

export interface RegistryCredentials {
  username: string;
  password: string;
}

export interface Challenge {
  scheme: 'bearer' | 'basic' | string;
  params: Record<string, string>;
}

/** Reads `Bearer realm="…",service="…",scope="…"` (quoted values may hold commas). */
export function parseChallenge(header: string | null): Challenge | undefined {
  if (!header) return undefined;
  const match = /^\s*([A-Za-z][\w-]*)\s*(.*)$/s.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  for (const param of match[2].matchAll(/([A-Za-z][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    params[param[1].toLowerCase()] = param[2] !== undefined ? param[2].replace(/\\(.)/g, '$1') : param[3];
  }
  return { scheme: match[1].toLowerCase(), params };
}

export function basicAuthorization(credentials: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64')}`;
}

/** The token endpoint's address for a challenge: realm with `service` and `scope` (pull on the repository by default). */
export function tokenUrl(challenge: Challenge, repository: string): URL {
  const url = new URL(challenge.params.realm);
  if (challenge.params.service) url.searchParams.set('service', challenge.params.service);
  url.searchParams.set('scope', challenge.params.scope || `repository:${repository}:pull`);
  return url;
}

/** The token of a token endpoint's JSON answer (`token`, or OAuth's `access_token`). */
export function tokenOf(body: unknown): string | undefined {
  const value = body as { token?: unknown; access_token?: unknown } | null;
  const token = value?.token ?? value?.access_token;
  return typeof token === 'string' && token.length > 0 ? token : undefined;
}
