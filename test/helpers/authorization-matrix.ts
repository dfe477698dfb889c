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

