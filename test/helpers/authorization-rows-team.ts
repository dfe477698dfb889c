// Rows of the authorization matrix for a team's quota and volume owner (issue 19) and custom domains (issue 20).
import type { Answer, ApiClient } from './client.ts';
import { all, any, onlyAdmin, unique, type Row, type World } from './authorization-matrix.ts';

const teamUpdate = { ...all(403), outsider: 404, teamAdmin: 200, admin: 200 };
const teamView = { ...all(200), outsider: 404 };

/** A domain of the world's team, made by its owner for one call. */
async function domainOf(w: World): Promise<string> {
  const made = await w.owner.post(`/teams/${w.team}/domains`, { name: `${unique('d').replace(' ', '-')}.matrix.example.org` });
  if (made.status !== 201) throw new Error(`a domain for the matrix: ${made.status} ${made.text}`);
  return made.body.id as string;
}

const onDomain = (work: (c: ApiClient, w: World, domain: string) => Promise<Answer>) => async (c: ApiClient, w: World) => work(c, w, await domainOf(w));

export const teamSettingRows: Row[] = [
  { route: 'GET /api/v1/teams/{team}/quota', call: (c, w) => c.get(`/teams/${w.team}/quota`), expect: teamView },
  {
    route: 'PUT /api/v1/teams/{team}/quota',
    call: (c, w) => c.put(`/teams/${w.team}/quota`, { cpu_millis: 64_000, memory_mib: 131_072, storage_gib: 1000 }),
    expect: onlyAdmin(200),
  },
  // Spec 4.7: cluster administrators with the browser session; every API key, an administrator's too, gets 403.
  { route: 'POST /api/v1/teams/{team}/volume-owner', call: (c, w) => c.post(`/teams/${w.team}/volume-owner`), expect: all(403) },
  { route: 'GET /api/v1/teams/{team}/domains', call: (c, w) => c.get(`/teams/${w.team}/domains`), expect: teamView },
  {
    route: 'POST /api/v1/teams/{team}/domains',
    call: (c, w) => c.post(`/teams/${w.team}/domains`, { name: `${unique('n').replace(' ', '-')}.matrix.example.org` }),
    expect: { ...teamUpdate, teamAdmin: 201, admin: 201 },
  },
  { route: 'GET /api/v1/teams/{team}/domains/{domain}', call: onDomain((c, w, d) => c.get(`/teams/${w.team}/domains/${d}`)), expect: teamView },
  {
    route: 'PATCH /api/v1/teams/{team}/domains/{domain}',
    call: onDomain((c, w, d) => c.patch(`/teams/${w.team}/domains/${d}`, { restricted: true }, any)),
    expect: teamUpdate,
  },
  {
    route: 'DELETE /api/v1/teams/{team}/domains/{domain}',
    call: onDomain((c, w, d) => c.delete(`/teams/${w.team}/domains/${d}`, any)),
    expect: { ...teamUpdate, teamAdmin: 204, admin: 204 },
  },
  { route: 'POST /api/v1/teams/{team}/domains/{domain}/check', call: onDomain((c, w, d) => c.post(`/teams/${w.team}/domains/${d}/check`)), expect: { ...teamUpdate, teamAdmin: 202, admin: 202 } },
  {
    route: 'PUT /api/v1/teams/{team}/domains/{domain}/certificate',
    call: onDomain((c, w, d) => c.put(`/teams/${w.team}/domains/${d}/certificate`, { certificate: 'not a certificate', private_key: 'not a key' })),
    expect: { ...teamUpdate, teamAdmin: 422, admin: 422 },
  },
  {
    route: 'DELETE /api/v1/teams/{team}/domains/{domain}/certificate',
    call: onDomain((c, w, d) => c.delete(`/teams/${w.team}/domains/${d}/certificate`)),
    expect: { ...teamUpdate, teamAdmin: 409, admin: 409 },
  },
];
