// The authorization matrix's callers, world and row shape (test/authorization-matrix.test.ts), shared by its row files.
import type { ApiClient, Answer } from './client.ts';

export type Caller = 'none' | 'outsider' | 'viewer' | 'developer' | 'teamAdmin' | 'admin';
export const callers: Caller[] = ['none', 'outsider', 'viewer', 'developer', 'teamAdmin', 'admin'];

export interface World {
  operation: string;
  workspace: number;
  managedService: string;
  dump: string;
  org: string;
  team: number;
  ownKeyId: Record<Caller, string>;
  foreignKeyId: string;
  dummy: number;
  owner: ApiClient;
  ownerId: number;
  /** An invitation of the org into the team, and a closed owner transfer of the workspace (to the owner). */
  invitation: string;
  transfer: string;
}

export interface Row {
  route: string;
  call: (client: ApiClient, world: World, who: Caller) => Promise<Answer>;
  expect: Record<Caller, number>;
}

export const all = (status: number, none = 401): Record<Caller, number> => ({
  none,
  outsider: status,
  viewer: status,
  developer: status,
  teamAdmin: status,
  admin: status,
});
export const onlyAdmin = (ok: number) => ({ ...all(403), admin: ok });
export const any = { headers: { 'if-match': '*' } };
export const stale = { headers: { 'if-match': '"v0"' } };
let counter = 0;
export const unique = (prefix: string) => `${prefix} ${++counter}`;


/** A GET of an address outside /api/v1 (GET /metrics) with the caller's credentials. */
export async function getOutsideApi(client: ApiClient, path: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (client.auth.token) headers.authorization = `Bearer ${client.auth.token}`;
  if (client.auth.cookie) headers.cookie = `__Host-svc_session=${client.auth.cookie}`;
  const response = await fetch(`${client.baseUrl}${path}`, { headers });
  const text = await response.text();
  const body: unknown = /json/.test(response.headers.get('content-type') ?? '') && text ? JSON.parse(text) : text;
  return { status: response.status, headers: response.headers, body, text };
}
