// The editor's out-of-memory kill (docs/capacity.md, issue 19): an editor pod runs in a cgroup with its workspace
// plan's memory; an editor that allocates past it is killed by the kernel, the pod's log says so as a service's log
// does, and when it keeps being killed the workspace shows the reason: "The IDE does not start: Out of memory: ...".
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { parsePlansFile } from '../src/capacity/plans-file.ts';
import { hostCgroups } from '../src/runtime/local/cgroups.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const cgroups = hostCgroups(process.getuid?.() === 0);
const PLANS = `workspace:
  default: roomy
  plans:
    roomy: { cpu: 1, memory: 1GiB, storageGib: 1 }
    tight: { cpu: 1, memory: 192MiB, storageGib: 1 }
service:
  default: tiny
  plans:
    tiny: { cpu: 0.1, memory: 128MiB, maxReplicas: 1 }
`;
// The editor: allocates (and touches) 512 MiB, then would serve; in plan `tight` it never gets there.
const HUNGRY_EDITOR = `exec python3 -c "a = bytearray(512 * 1024 * 1024); import http.server, os; http.server.HTTPServer((os.environ['HOST'], int(os.environ['PORT'])), http.server.SimpleHTTPRequestHandler).serve_forever()"`;

let scratch: string;
let server: TestServer;
let driver: RuntimeDriver;
let dataDir: string;
const ids: number[] = [];

before(async () => {
  if (!cgroups) return;
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-editor-memory-'));
  await writeFile(path.join(scratch, 'plans.yml'), PLANS);
  server = await startTestServer({
    env: { SVC_PLANS_FILE: path.join(scratch, 'plans.yml') },
    driver: (context) => {
      dataDir = context.dataDir;
      driver = createLocalDriver({ dataDir: context.dataDir, clock: context.clock, editorCommand: HUNGRY_EDITOR, editorTimeoutMs: 60_000, plans: parsePlansFile(PLANS) });
      return driver;
    },
  });
});
after(async () => {
  if (!cgroups) return;
  await removeWorkspaces(driver, ids);
  await server?.close();
  await rm(scratch, { recursive: true, force: true });
});

test('an editor over its plan\'s memory is killed; the pod log and the workspace say so with the plan and its limit', { skip: !cgroups && 'needs root and cgroups with the memory controller' }, async () => {
  const org = (await server.admin.post('/orgs', { name: 'Memory' })).body.id;
  const team = (await server.admin.post('/teams', { org_id: org, name: 'Memory' })).body.id;
  const created = await server.admin.post('/workspaces', { team_id: team, name: 'hungry', plan: 'tight' });
  assert.equal(created.status, 202, created.text);
  const id = Number(created.body.target.split('/')[2]);
  ids.push(id);
  const operation = await operationFinished(server.admin, created.body.id);
  assert.equal(operation.state, 'failed', JSON.stringify(operation));
  const note = 'Out of memory: killed for using more than the 192 MiB of memory that plan tight allows';
  const ws = (await server.admin.get(`/workspaces/${id}`)).body;
  assert.deepEqual([ws.state, ws.status_detail], ['error', `The IDE does not start: ${note}`]);
  const log = await readFile(path.join(dataDir, 'pods', `${id}.log`), 'utf8');
  assert.match(log, new RegExp(`${note}\\n`));
  assert.match(log, new RegExp(`editor exited \\(${note}\\); restart`));
});
