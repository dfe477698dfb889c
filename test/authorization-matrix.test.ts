// Every route × {no credentials, outsider, viewer, developer, team admin, administrator}: the expected status.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { parse } from 'yaml';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { dumpFile } from '../src/managed/dumps.ts';
import { insertManagedDump } from '../src/store/managed-dumps.ts';
import { insertManagedService } from '../src/store/managed-services.ts';
import { insertOperation } from '../src/store/operations.ts';
import { saveOperationTimeline } from '../src/store/operation-timelines.ts';
import { insertWorkspace } from '../src/store/workspaces.ts';
import { ApiClient, createPerson, type Answer } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

import { all, any, callers, getOutsideApi, onlyAdmin, stale, unique, type Caller, type Row, type World } from './helpers/authorization-matrix.ts';
import { streamRows } from './helpers/authorization-rows-streams.ts';
import { teamSettingRows } from './helpers/authorization-rows-team.ts';

const rows: Row[] = [
  { route: 'GET /api/v1/version', call: (c) => c.get('/version'), expect: all(200, 200) },
  { route: 'GET /api/v1/openapi.yaml', call: (c) => c.get('/openapi.yaml'), expect: all(200, 200) },
  { route: 'GET /api/v1/schemas/svc.json', call: (c) => c.get('/schemas/svc.json'), expect: all(200, 200) },
  { route: 'GET /metrics', call: (c) => getOutsideApi(c, '/metrics'), expect: onlyAdmin(200) },
  { route: 'POST /api/v1/sessions', call: (c) => c.post('/sessions', {}), expect: all(422, 422) },
  { route: 'DELETE /api/v1/sessions/current', call: (c) => c.delete('/sessions/current'), expect: all(403) },
  { route: 'GET /api/v1/me', call: (c) => c.get('/me'), expect: all(200) },
  // Single sign-on: public listing and flows (this installation has no provider: 404 to everyone), linking with the session only.
  { route: 'GET /api/v1/auth/providers', call: (c) => c.get('/auth/providers'), expect: all(200, 200) },
  { route: 'GET /api/v1/auth/oidc/{provider}/start', call: (c) => c.get('/auth/oidc/corp/start'), expect: all(404, 404) },
  { route: 'GET /api/v1/auth/oidc/{provider}/callback', call: (c) => c.get('/auth/oidc/corp/callback?state=x'), expect: all(404, 404) },
  { route: 'GET /api/v1/me/identities', call: (c) => c.get('/me/identities'), expect: all(200) },
  { route: 'POST /api/v1/me/identities/{provider}', call: (c) => c.post('/me/identities/corp', {}), expect: all(403) },
  { route: 'GET /api/v1/me/git-credentials', call: (c) => c.get('/me/git-credentials'), expect: all(200) },
  { route: 'POST /api/v1/me/git-credentials', call: (c) => c.post('/me/git-credentials', { host: 'github.com', password: 'p' }), expect: all(201) },
  { route: 'DELETE /api/v1/me/git-credentials/{host}', call: (c) => c.delete('/me/git-credentials/nothing.example.com'), expect: all(404) },
  { route: 'GET /api/v1/me/ssh-key', call: (c) => c.get('/me/ssh-key'), expect: all(404) },
  { route: 'POST /api/v1/me/ssh-key', call: (c) => c.post('/me/ssh-key'), expect: all(201) },
  { route: 'GET /api/v1/providers', call: (c) => c.get('/providers'), expect: all(200) },
  { route: 'GET /api/v1/plans', call: (c) => c.get('/plans?kind=managed'), expect: all(200) },
  { route: 'PUT /api/v1/me/password', call: (c) => c.put('/me/password', { new_password: 'long enough' }), expect: all(403) },
  { route: 'POST /api/v1/me/api-keys', call: (c) => c.post('/me/api-keys', { name: 'x' }), expect: all(403) },
  { route: 'GET /api/v1/me/dotfiles', call: (c) => c.get('/me/dotfiles'), expect: all(200) },
  { route: 'PUT /api/v1/me/dotfiles', call: (c) => c.put('/me/dotfiles', { url: 'https://git.example.com/me/dotfiles.git' }), expect: all(200) },
  { route: 'DELETE /api/v1/me/dotfiles', call: (c) => c.delete('/me/dotfiles'), expect: all(204) },
  { route: 'GET /api/v1/me/api-keys', call: (c) => c.get('/me/api-keys'), expect: all(200) },
  { route: 'GET /api/v1/me/api-keys/{key}', call: (c, w, who) => c.get(`/me/api-keys/${w.ownKeyId[who]}`), expect: all(200) },
  { route: 'DELETE /api/v1/me/api-keys/{key}', call: (c, w) => c.delete(`/me/api-keys/${w.foreignKeyId}`), expect: all(404) },
  {
    route: 'POST /api/v1/me/api-keys/{key}/regenerate',
    call: (c, w, who) => c.post(`/me/api-keys/${w.ownKeyId[who]}/regenerate`),
    expect: all(403),
  },
  { route: 'POST /api/v1/users', call: (c) => c.post('/users', { email: `${unique('u').replace(' ', '')}@example.com`, name: 'U' }), expect: onlyAdmin(201) },
  { route: 'GET /api/v1/users', call: (c) => c.get('/users'), expect: onlyAdmin(200) },
  { route: 'GET /api/v1/users/{user}', call: (c, w) => c.get(`/users/${w.dummy}`), expect: onlyAdmin(200) },
  { route: 'POST /api/v1/users/{user}/sign-in-links', call: (c, w) => c.post(`/users/${w.dummy}/sign-in-links`), expect: onlyAdmin(201) },
  { route: 'GET /api/v1/audit-log', call: (c) => c.get('/audit-log'), expect: onlyAdmin(200) },
  { route: 'POST /api/v1/orgs', call: (c) => c.post('/orgs', { name: unique('Org') }), expect: all(201) },
  { route: 'GET /api/v1/orgs', call: (c) => c.get('/orgs'), expect: all(200) },
  { route: 'GET /api/v1/orgs/{org}', call: (c, w) => c.get(`/orgs/${w.org}`), expect: { ...all(200), outsider: 404 } },
  {
    route: 'PATCH /api/v1/orgs/{org}',
    call: (c, w) => c.patch(`/orgs/${w.org}`, { name: 'Matrix Org' }, any),
    expect: { ...all(403), outsider: 404, admin: 200 },
  },
  { route: 'DELETE /api/v1/orgs/{org}', call: (c, w) => c.delete(`/orgs/${w.org}`, any), expect: { ...all(403), outsider: 404, admin: 409 } },
  { route: 'GET /api/v1/orgs/{org}/members', call: (c, w) => c.get(`/orgs/${w.org}/members`), expect: { ...all(200), outsider: 404 } },
  {
    route: 'PUT /api/v1/orgs/{org}/members/{user}',
    call: (c, w) => c.put(`/orgs/${w.org}/members/${w.dummy}`, { role: 'member' }),
    expect: { ...all(403), outsider: 404, admin: 204 },
  },
  {
    route: 'DELETE /api/v1/orgs/{org}/members/{user}',
    call: async (c, w) => {
      await w.owner.put(`/orgs/${w.org}/members/${w.dummy}`, { role: 'member' });
      return c.delete(`/orgs/${w.org}/members/${w.dummy}`);
    },
    expect: { ...all(403), outsider: 404, admin: 204 },
  },
  {
    route: 'POST /api/v1/teams',
    call: (c, w) => c.post('/teams', { org_id: w.org, name: unique('Team') }),
    expect: { ...all(403), outsider: 404, admin: 201 },
  },
  { route: 'GET /api/v1/teams', call: (c) => c.get('/teams'), expect: all(200) },
  { route: 'GET /api/v1/teams/{team}', call: (c, w) => c.get(`/teams/${w.team}`), expect: { ...all(200), outsider: 404 } },
  {
    route: 'PATCH /api/v1/teams/{team}',
    call: (c, w) => c.patch(`/teams/${w.team}`, { name: 'Matrix Team' }, any),
    expect: { ...all(403), outsider: 404, teamAdmin: 200, admin: 200 },
  },
  {
    route: 'DELETE /api/v1/teams/{team}',
    call: (c, w) => c.delete(`/teams/${w.team}`, stale),
    expect: { ...all(403), outsider: 404, teamAdmin: 412, admin: 412 },
  },
  { route: 'GET /api/v1/teams/{team}/container-settings', call: (c, w) => c.get(`/teams/${w.team}/container-settings`), expect: { ...all(200), outsider: 404 } },
  {
    route: 'PUT /api/v1/teams/{team}/container-settings',
    call: (c, w) => c.put(`/teams/${w.team}/container-settings`, { run_as_user_allowed: false }),
    expect: onlyAdmin(200),
  },
  { route: 'GET /api/v1/teams/{team}/network-settings', call: (c, w) => c.get(`/teams/${w.team}/network-settings`), expect: { ...all(200), outsider: 404 } },
  {
    route: 'PUT /api/v1/teams/{team}/network-settings',
    call: (c, w) => c.put(`/teams/${w.team}/network-settings`, { egress: 'on' }),
    expect: { ...all(403), outsider: 404, teamAdmin: 200, admin: 200 },
  },
  { route: 'GET /api/v1/teams/{team}/members', call: (c, w) => c.get(`/teams/${w.team}/members`), expect: { ...all(200), outsider: 404 } },
  { route: 'GET /api/v1/teams/{team}/registry-credentials', call: (c, w) => c.get(`/teams/${w.team}/registry-credentials`), expect: { ...all(200), outsider: 404 } },
  {
    route: 'POST /api/v1/teams/{team}/registry-credentials',
    call: (c, w) => c.post(`/teams/${w.team}/registry-credentials`, { registry: 'registry.example.com', username: 'u', password: 'p' }),
    expect: { ...all(403), outsider: 404, teamAdmin: 201, admin: 200 },
  },
  {
    route: 'DELETE /api/v1/teams/{team}/registry-credentials/{registry}',
    call: async (c, w) => {
      await w.owner.post(`/teams/${w.team}/registry-credentials`, { registry: 'gone.example.com', username: 'u', password: 'p' });
      return c.delete(`/teams/${w.team}/registry-credentials/gone.example.com`);
    },
    expect: { ...all(403), outsider: 404, teamAdmin: 204, admin: 204 },
  },
  {
    route: 'PUT /api/v1/teams/{team}/members/{user}',
    call: (c, w) => c.put(`/teams/${w.team}/members/${w.dummy}`, { role: 'viewer' }),
    expect: { ...all(403), outsider: 404, teamAdmin: 204, admin: 204 },
  },
  {
    route: 'DELETE /api/v1/teams/{team}/members/{user}',
    call: async (c, w) => {
      await w.owner.put(`/teams/${w.team}/members/${w.dummy}`, { role: 'viewer' });
      return c.delete(`/teams/${w.team}/members/${w.dummy}`);
    },
    expect: { ...all(403), outsider: 404, teamAdmin: 204, admin: 204 },
  },
  {
    route: 'GET /api/v1/events',
    call: (c) => streamStatus(c, '/events'),
    expect: all(200),
  },
  {
    route: 'POST /api/v1/workspaces',
    call: (c, w) => c.post('/workspaces', { team_id: w.team, name: unique('ws').replace(' ', '-'), git: { provider: 'git', repo: 'not a url' } }),
    expect: { ...all(422), outsider: 404, viewer: 403 },
  },
  { route: 'GET /api/v1/workspaces', call: (c) => c.get('/workspaces'), expect: all(200) },
  { route: 'GET /api/v1/managed-services/{ms}', call: (c, w) => c.get(`/managed-services/${w.managedService}`), expect: { ...all(200), outsider: 404 } },
  { route: 'GET /api/v1/teams/{team}/managed-services', call: (c, w) => c.get(`/teams/${w.team}/managed-services`), expect: { ...all(200), outsider: 404 } },
  // The matrix instance is paused in a workspace being created: a pause is refused as paused already, a resume as torn down.
  ...['pause', 'resume'].map((action) => ({
    route: `POST /api/v1/managed-services/{ms}/${action}`,
    call: (c: ApiClient, w: World) => c.post(`/managed-services/${w.managedService}/${action}`),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  })),
  // Its workspace has no deployed landscape: no password to reveal yet; a viewer may never see one.
  {
    route: 'POST /api/v1/managed-services/{ms}/reveal',
    call: (c, w) => c.post(`/managed-services/${w.managedService}/reveal`),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  },
  { route: 'GET /api/v1/workspaces/{ws}', call: (c, w) => c.get(`/workspaces/${w.workspace}`), expect: { ...all(200), outsider: 404 } },
  { route: 'GET /api/v1/workspaces/{ws}/ssh-host', call: (c, w) => c.get(`/workspaces/${w.workspace}/ssh-host`), expect: { ...all(200), outsider: 404 } },
  { route: 'GET /api/v1/workspaces/{ws}/activity', call: (c, w) => c.get(`/workspaces/${w.workspace}/activity`), expect: { ...all(200), outsider: 404 } },
  // keep-awake takes a workspace being created (it runs next); workspace.use, like sleep and wake
  {
    route: 'POST /api/v1/workspaces/{ws}/keep-awake',
    call: (c, w) => c.post(`/workspaces/${w.workspace}/keep-awake`, { for_seconds: 3600 }),
    expect: { ...all(200), outsider: 404, viewer: 403 },
  },
  {
    route: 'DELETE /api/v1/workspaces/{ws}/keep-awake',
    call: async (c, w) => {
      await w.owner.post(`/workspaces/${w.workspace}/keep-awake`, { for_seconds: 3600 });
      return c.delete(`/workspaces/${w.workspace}/keep-awake`);
    },
    expect: { ...all(204), outsider: 404, viewer: 403 },
  },
  {
    route: 'PATCH /api/v1/workspaces/{ws}',
    call: (c, w) => c.patch(`/workspaces/${w.workspace}`, { name: 'matrix-ws' }, stale),
    expect: { ...all(412), outsider: 404, viewer: 403 },
  },
  {
    route: 'DELETE /api/v1/workspaces/{ws}',
    call: (c, w) => c.delete(`/workspaces/${w.workspace}`, stale),
    expect: { ...all(412), outsider: 404, viewer: 403 },
  },
  // The matrix workspace is being created (it has no pod): every allowed action is refused by its state (409).
  ...['sleep', 'stop', 'wake', 'start', 'restore', 'purge', 'archive', 'restore-archive'].map((action) => ({
    route: `POST /api/v1/workspaces/{ws}/${action}`,
    call: (c: ApiClient, w: World) => c.post(`/workspaces/${w.workspace}/${action}`),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  })),
  { route: 'GET /api/v1/workspaces/{ws}/variables', call: (c, w) => c.get(`/workspaces/${w.workspace}/variables`), expect: { ...all(200), outsider: 404 } },
  {
    route: 'PUT /api/v1/workspaces/{ws}/variables/{name}',
    call: (c, w) => c.put(`/workspaces/${w.workspace}/variables/MATRIX`, { value: '1' }),
    expect: { ...all(200), outsider: 404, viewer: 403 },
  },
  {
    route: 'DELETE /api/v1/workspaces/{ws}/variables/{name}',
    call: async (c, w) => {
      await w.owner.put(`/workspaces/${w.workspace}/variables/GONE`, { value: '1' });
      return c.delete(`/workspaces/${w.workspace}/variables/GONE`);
    },
    expect: { ...all(204), outsider: 404, viewer: 403 },
  },
  { route: 'GET /api/v1/workspaces/{ws}/secrets', call: (c, w) => c.get(`/workspaces/${w.workspace}/secrets`), expect: { ...all(200), outsider: 404 } },
  {
    route: 'PUT /api/v1/workspaces/{ws}/secrets/{name}',
    call: (c, w) => c.put(`/workspaces/${w.workspace}/secrets/MATRIX`, { value: 's' }),
    expect: { ...all(200), outsider: 404, viewer: 403 },
  },
  {
    route: 'DELETE /api/v1/workspaces/{ws}/secrets/{name}',
    call: async (c, w) => {
      await w.owner.put(`/workspaces/${w.workspace}/secrets/GONE`, { value: 's' });
      return c.delete(`/workspaces/${w.workspace}/secrets/GONE`);
    },
    expect: { ...all(204), outsider: 404, viewer: 403 },
  },
  { route: 'GET /api/v1/workspaces/{ws}/landscape', call: (c, w) => c.get(`/workspaces/${w.workspace}/landscape`), expect: { ...all(200), outsider: 404 } },
  // The matrix workspace has no volume yet: planning is refused by its state (409) for everyone allowed to ask.
  { route: 'GET /api/v1/workspaces/{ws}/landscape/plan', call: (c, w) => c.get(`/workspaces/${w.workspace}/landscape/plan`), expect: { ...all(409), outsider: 404 } },
  {
    route: 'POST /api/v1/workspaces/{ws}/landscape/sync',
    call: (c, w) => c.post(`/workspaces/${w.workspace}/landscape/sync`, { plan_hash: 'a'.repeat(64) }),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  },
  {
    route: 'POST /api/v1/workspaces/{ws}/landscape/teardown',
    call: (c, w) => c.post(`/workspaces/${w.workspace}/landscape/teardown`),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  },
  // The matrix workspace has no deployed landscape: services are not found by anyone allowed to ask.
  {
    route: 'POST /api/v1/workspaces/{ws}/landscape/services/{service}/start',
    call: (c, w) => c.post(`/workspaces/${w.workspace}/landscape/services/web/start`),
    expect: { ...all(404), viewer: 403 },
  },
  {
    route: 'POST /api/v1/workspaces/{ws}/landscape/services/{service}/stop',
    call: (c, w) => c.post(`/workspaces/${w.workspace}/landscape/services/web/stop`),
    expect: { ...all(404), viewer: 403 },
  },
  { route: 'GET /api/v1/workspaces/{ws}/landscape/services/{service}/logs', call: (c, w) => c.get(`/workspaces/${w.workspace}/landscape/services/web/logs`), expect: all(404) },
  { route: 'GET /api/v1/workspaces/{ws}/stages/{stage}', call: (c, w) => c.get(`/workspaces/${w.workspace}/stages/prepare`), expect: { ...all(200), outsider: 404 } },
  // No svc.yml to run from (or the workspace does not run): 409 for everyone allowed to start a stage.
  {
    route: 'POST /api/v1/workspaces/{ws}/stages/{stage}/start',
    call: (c, w) => c.post(`/workspaces/${w.workspace}/stages/prepare/start`, {}),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  },
  {
    route: 'POST /api/v1/workspaces/{ws}/stages/{stage}/stop',
    call: (c, w) => c.post(`/workspaces/${w.workspace}/stages/prepare/stop`),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  },
  {
    route: 'GET /api/v1/workspaces/{ws}/stages/{stage}/runs/{run}/steps/{step}/logs',
    call: (c, w) => c.get(`/workspaces/${w.workspace}/stages/prepare/runs/1/steps/1/logs`),
    expect: all(404),
  },
  { route: 'POST /api/v1/workspaces/{ws}/sign-in-links', call: (c, w) => c.post(`/workspaces/${w.workspace}/sign-in-links`, {}), expect: { ...all(201), outsider: 404 } },
  // Managed-service dumps: the matrix instance is paused and the test server has no client tools, so every caller
  // allowed to make or restore one gets 501 (the installation's lack comes first); a recorded dump downloads.
  { route: 'POST /api/v1/managed-services/{ms}/dumps', call: (c, w) => c.post(`/managed-services/${w.managedService}/dumps`), expect: { ...all(501), outsider: 404, viewer: 403 } },
  { route: 'GET /api/v1/managed-services/{ms}/dumps', call: (c, w) => c.get(`/managed-services/${w.managedService}/dumps`), expect: { ...all(200), outsider: 404 } },
  {
    route: 'GET /api/v1/managed-services/{ms}/dumps/{dump}',
    call: (c, w) => c.get(`/managed-services/${w.managedService}/dumps/${w.dump}`),
    expect: { ...all(200), outsider: 404, viewer: 403 },
  },
  {
    route: 'DELETE /api/v1/managed-services/{ms}/dumps/{dump}',
    call: async (c, w) => c.delete(`/managed-services/${w.managedService}/dumps/${await matrixDump(w)}`),
    expect: { ...all(204), outsider: 404, viewer: 403 },
  },
  {
    route: 'POST /api/v1/managed-services/{ms}/restore',
    call: (c, w) => c.post(`/managed-services/${w.managedService}/restore`, { dump: w.dump }),
    expect: { ...all(501), outsider: 404, viewer: 403 },
  },
  // Invitations: org owners and administrators invite anyone; a team admin into their team; others may not.
  {
    route: 'POST /api/v1/orgs/{org}/invitations',
    call: (c, w) => c.post(`/orgs/${w.org}/invitations`, { email: `${unique('inv').replace(' ', '')}@example.com`, teams: [{ team_id: w.team, role: 'viewer' }] }),
    expect: { ...all(403), outsider: 404, teamAdmin: 201, admin: 201 },
  },
  { route: 'GET /api/v1/orgs/{org}/invitations', call: (c, w) => c.get(`/orgs/${w.org}/invitations`), expect: { ...all(200), outsider: 404 } },
  { route: 'GET /api/v1/invitations/{id}', call: (c, w) => c.get(`/invitations/${w.invitation}`), expect: { ...all(404), teamAdmin: 200, admin: 200 } },
  ...['revoke', 'renew'].map((action) => ({
    route: `POST /api/v1/invitations/{id}/${action}`,
    call: async (c: ApiClient, w: World) => {
      const made = await w.owner.post(`/orgs/${w.org}/invitations`, { email: `${unique(action).replace(' ', '')}@example.com`, teams: [{ team_id: w.team, role: 'viewer' }] });
      return c.post(`/invitations/${made.body.id}/${action}`);
    },
    expect: { ...all(404), teamAdmin: 200, admin: 200 },
  })),
  { route: 'POST /api/v1/invitations/accept', call: (c) => c.post('/invitations/accept', { token: 'not-a-link' }), expect: all(403, 403) },
  // Owner transfers: the owner (the administrator here) or a team admin offers; an offer is cancelled right away.
  {
    route: 'POST /api/v1/workspaces/{ws}/owner-transfers',
    call: async (c, w) => {
      const answer = await c.post(`/workspaces/${w.workspace}/owner-transfers`, { to_user_id: w.ownerId });
      if (answer.status === 201) await w.owner.post(`/owner-transfers/${answer.body.id}/cancel`);
      return answer;
    },
    expect: { ...all(403), outsider: 404, teamAdmin: 201, admin: 201 },
  },
  { route: 'GET /api/v1/workspaces/{ws}/owner-transfers', call: (c, w) => c.get(`/workspaces/${w.workspace}/owner-transfers`), expect: { ...all(200), outsider: 404 } },
  { route: 'GET /api/v1/me/owner-transfers', call: (c) => c.get('/me/owner-transfers'), expect: all(200) },
  { route: 'GET /api/v1/owner-transfers/{id}', call: (c, w) => c.get(`/owner-transfers/${w.transfer}`), expect: { ...all(200), outsider: 404 } },
  // Only the person offered accepts or declines (everyone else: 404); cancelling a closed transfer is 409.
  ...['accept', 'decline'].map((action) => ({
    route: `POST /api/v1/owner-transfers/{id}/${action}`,
    call: (c: ApiClient, w: World) => c.post(`/owner-transfers/${w.transfer}/${action}`),
    expect: all(404),
  })),
  {
    route: 'POST /api/v1/owner-transfers/{id}/cancel',
    call: (c, w) => c.post(`/owner-transfers/${w.transfer}/cancel`),
    expect: { ...all(409), outsider: 404, viewer: 403, developer: 403 },
  },
  { route: 'GET /api/v1/operations', call: (c) => c.get('/operations'), expect: all(200) },
  {
    route: 'GET /api/v1/operations/{id}',
    call: (c, w) => c.get(`/operations/${w.operation}`),
    expect: { ...all(200), outsider: 404 },
  },
  {
    route: 'GET /api/v1/operations/{id}/timeline',
    call: (c, w) => c.get(`/operations/${w.operation}/timeline`),
    expect: { ...all(200), outsider: 404 },
  },
  { route: 'GET /api/v1/workspaces/{ws}/timings', call: (c, w) => c.get(`/workspaces/${w.workspace}/timings`), expect: { ...all(200), outsider: 404 } },
  ...teamSettingRows,
  ...streamRows,
];

/** The status of an event stream's answer, without waiting for the stream to end. */
async function streamStatus(client: ApiClient, path: string): Promise<Answer> {
  const abort = new AbortController();
  const headers: Record<string, string> = client.auth.token ? { authorization: `Bearer ${client.auth.token}` } : {};
  const response = await fetch(`${client.baseUrl}/api/v1${path}`, { headers, signal: abort.signal });
  const text = response.status === 200 ? '' : await response.text();
  abort.abort();
  return { status: response.status, headers: response.headers, body: undefined, text };
}

let server: TestServer;
let world: World;
const clients = {} as Record<Caller, ApiClient>;

before(async () => {
  server = await startTestServer();
  const owner = await createPerson(server.admin, 'matrix-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Matrix Org' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Matrix Team' })).body.id;
  const roles = { viewer: 'viewer', developer: 'developer', teamAdmin: 'admin' } as const;
  const ownKeyId = {} as Record<Caller, string>;
  clients.none = server.anonymous;
  clients.admin = server.admin;
  for (const who of ['outsider', 'viewer', 'developer', 'teamAdmin'] as const) {
    const person = await createPerson(server.admin, `matrix-${who.toLowerCase()}@example.com`);
    if (who !== 'outsider') await owner.key.put(`/teams/${team}/members/${person.id}`, { role: roles[who] });
    clients[who] = person.key;
  }
  for (const who of callers) {
    if (who !== 'none') ownKeyId[who] = (await clients[who].get('/me/api-keys')).body.items[0].id;
  }
  const dummy = (await server.admin.post('/users', { email: 'matrix-dummy@example.com', name: 'Dummy' })).body.id;
  const operation = await insertOperation(server.server.database.pool, {
    id: randomUUID(),
    kind: 'workspace.create',
    target: '/workspaces/1',
    teamId: team,
    createdBy: null,
    input: {},
    at: new Date(),
  });
  const workspace = await insertWorkspace(server.server.database.pool, {
    teamId: team,
    name: 'matrix-ws',
    plan: 'standard',
    baseImage: 'debian',
    git: null,
    storageGib: 1,
    restricted: false,
    idleTimeoutMinutes: 30,
    state: 'creating',
    statusDetail: 'Configuring storage',
    createdBy: 1,
    at: new Date(),
  });
  // timelines of the operation and of a create of the workspace (GET /operations/{id}/timeline, .../timings)
  const timeline = { startedAt: Date.now() - 1000, endedAt: Date.now(), steps: [{ name: 'queue and claim', startedAt: Date.now() - 1000, endedAt: Date.now() }] };
  await saveOperationTimeline(server.server.database.pool, operation.id, timeline, new Date());
  const created = await insertOperation(server.server.database.pool, { id: randomUUID(), kind: 'workspace.create', target: `/workspaces/${workspace.id}`, teamId: team, createdBy: null, input: {}, at: new Date() });
  await saveOperationTimeline(server.server.database.pool, created.id, timeline, new Date());
  const managed = await insertManagedService(
    server.server.database.pool,
    { workspace_id: workspace.id, team_id: team, name: 'db', provider: 'postgres', version: '16', plan: 'small', status: 'paused' },
    new Date(),
  );
  const invitation = (await owner.key.post(`/orgs/${org}/invitations`, { email: 'matrix-invited@example.com', teams: [{ team_id: team, role: 'viewer' }] })).body.id;
  const transfer = (await owner.key.post(`/workspaces/${workspace.id}/owner-transfers`, { to_user_id: owner.id })).body.id;
  await owner.key.post(`/owner-transfers/${transfer}/cancel`);
  world = { operation: operation.id, workspace: workspace.id, managedService: managed.id, dump: '', org, team, ownKeyId, foreignKeyId: ownKeyId.teamAdmin, dummy, owner: owner.key, ownerId: owner.id, invitation, transfer };
  world.foreignKeyId = (await owner.key.get('/me/api-keys')).body.items[0].id;
  world.dump = await matrixDump(world);
});

/** A dump of the matrix instance, recorded with its file. */
async function matrixDump(w: World): Promise<string> {
  const row = await insertManagedDump(server.server.database.pool, {
    id: randomUUID(), managed_service_id: w.managedService, team_id: w.team, provider: 'postgres', version: '16', kind: 'manual',
    format: 'pg_dump custom format', extension: '.dump', media_type: 'application/octet-stream', size_bytes: 5, operation_id: null,
    created_by: null, created_at: new Date(),
  });
  await mkdir(path.dirname(dumpFile(server.server.config.dataDir, row)), { recursive: true });
  await writeFile(dumpFile(server.server.config.dataDir, row), 'PGDMP');
  return row.id;
}
after(async () => server?.close());

for (const row of rows) {
  test(`${row.route}: ${callers.map((c) => `${c} ${row.expect[c]}`).join(', ')}`, async () => {
    for (const who of callers) {
      const answer = await row.call(clients[who], world, who);
      assert.equal(answer.status, row.expect[who], `${who}: ${answer.text}`);
    }
  });
}

test('the matrix covers every route of the OpenAPI document', async () => {
  const document = parse((await server.anonymous.get('/openapi.yaml')).text);
  const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
  assert.deepEqual(documented.sort(), rows.map((r) => r.route).sort());
});
