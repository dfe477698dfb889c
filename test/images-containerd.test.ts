// scripts/test-cluster/images.sh --import against a real containerd (Debian's 1.6, as the test cluster's kubelet
// runs it) of this test's own: the archives are imported under their names (svc.local/<name>:<key>), and `ctr run`
// of them runs what the pods run, as a workspace UID with group 0: the agent image's node and git, the copy the
// agent's init container makes; the managed image's engines where the script's header says they are.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'test-cluster', 'images.sh');
const missing = ['containerd', 'ctr', 'runc', 'mmdebstrap', 'umoci', 'skopeo'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
const skip = process.getuid?.() !== 0 ? 'containerd and the image build need root' : missing.length > 0 ? `missing ${missing.join(', ')} (apt-get install containerd; scripts/setup.sh installs the rest)` : false;

let dir: string;
let containerd: ChildProcess | undefined;
let address: string;

async function waitForSocket(file: string, child: ChildProcess, deadline: number): Promise<void> {
  while (!existsSync(file)) {
    if (child.exitCode !== null) throw new Error(`containerd exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`containerd did not open ${file}`);
    await new Promise((resolve) => setTimeout(resolve, 50)); // a poll with a deadline: containerd tells no one it listens
  }
}

before(async () => {
  if (skip) return;
  dir = await mkdtemp(path.join(os.tmpdir(), 'svc-containerd-'));
  address = path.join(dir, 'containerd.sock');
  const config = [
    'version = 2',
    `root = "${dir}/root"`,
    `state = "${dir}/state"`,
    'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
    '[grpc]',
    `  address = "${address}"`,
    '[ttrpc]',
    `  address = "${dir}/containerd.ttrpc.sock"`,
    '[debug]',
    `  address = "${dir}/debug.sock"`,
    '[metrics]',
    '  address = ""',
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = "${dir}/opt"`,
  ];
  await writeFile(path.join(dir, 'config.toml'), config.join('\n') + '\n');
  containerd = spawn('containerd', ['--config', path.join(dir, 'config.toml')], { stdio: 'ignore' });
  await waitForSocket(address, containerd, Date.now() + 30_000);
});

after(async () => {
  if (containerd && containerd.exitCode === null) {
    const exited = new Promise((resolve) => containerd!.once('exit', resolve));
    containerd.kill('SIGTERM');
    await exited;
  }
  if (dir) {
    spawnSync('sh', ['-c', `grep -o " ${dir}/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l`]);
    await rm(dir, { recursive: true, force: true });
  }
});

const ctr = (...args: string[]) => spawnSync('ctr', ['-n', 'k8s.io', '--address', address, ...args], { encoding: 'utf8', timeout: 120_000 });

/** Runs a shell command in a container of the image as UID 10001, group 0 (ctr 1.6 has no --user: setpriv). */
function runAs10001(image: string, name: string, command: string, mounts: string[] = []): { status: number | null; stdout: string; stderr: string } {
  return ctr('run', '--rm', ...mounts.flatMap((m) => ['--mount', m]), image, `${name}-${process.pid}`, 'setpriv', '--reuid', '10001', '--regid', '0', '--clear-groups', 'sh', '-c', command);
}

let images: Record<string, string> = {};

test('images.sh --import puts base, agent, managed and server into containerd under their names', { skip, timeout: 20 * 60_000 }, () => {
  const result = spawnSync('bash', [script, '--import'], { env: { ...process.env, SVC_CONTAINERD_ADDRESS: address }, encoding: 'utf8', timeout: 20 * 60_000 });
  assert.equal(result.status, 0, result.stderr);
  images = Object.fromEntries(result.stdout.trim().split('\n').filter((line) => /_IMAGE=/.test(line)).map((line) => [line.split('=')[0], line.split('=')[1]]));
  assert.match(images.SVC_KUBE_BASE_IMAGE, /^svc\.local\/base:[0-9a-f]{16}$/);
  assert.match(images.SVC_KUBE_AGENT_IMAGE, /^svc\.local\/agent:[0-9a-f]{16}$/);
  assert.match(images.SVC_KUBE_MANAGED_IMAGE, /^svc\.local\/managed:[0-9a-f]{16}$/);
  assert.match(images.SVC_KUBE_SERVER_IMAGE, /^svc\.local\/server:[0-9a-f]{16}$/);
  const listed = ctr('images', 'ls', '-q');
  assert.equal(listed.status, 0, listed.stderr);
  assert.deepEqual(listed.stdout.trim().split('\n').sort(), Object.values(images).sort());
});

test('the agent image runs node and git as a workspace UID (sftp-server and rsync beside them, for scp, sftp and rsync over svc ssh), and its /opt/svc copies as the init container copies it', { skip, timeout: 5 * 60_000 }, () => {
  assert.ok(images.SVC_KUBE_AGENT_IMAGE, 'imported by the test before');
  const result = runAs10001(images.SVC_KUBE_AGENT_IMAGE, 'svc-agent-check', 'id -u; /opt/svc/bin/node --version; git --version; test -x /usr/lib/openssh/sftp-server && rsync --version | head -1 | cut -c1-5; mkdir /tmp/agent && cp -a /opt/svc/. /tmp/agent/ && cd /tmp/agent && ./bin/node -e "import(\'/tmp/agent/node_modules/node-pty/lib/index.js\').then((m) => console.log(typeof m.spawn))" && test -f main.mjs && echo copied; echo "$PATH $LANG"');
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(result.stdout.trim().split('\n'), ['10001', process.version, result.stdout.split('\n')[2], 'rsync', 'function', 'copied', '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin C.UTF-8']);
  assert.match(result.stdout.split('\n')[2], /^git version 2\.\d+/);
});

test('the managed image has PostgreSQL, redis-server and nats-server where images.sh says', { skip, timeout: 5 * 60_000 }, async () => {
  assert.ok(images.SVC_KUBE_MANAGED_IMAGE, 'imported by the test before');
  // initdb looks its UID up: a passwd holding it, mounted as the header says.
  const passwd = path.join(dir, 'passwd');
  await writeFile(passwd, 'root:x:0:0:root:/root:/bin/sh\npostgres:x:10001:0:PostgreSQL:/tmp:/usr/sbin/nologin\n', { mode: 0o644 });
  const command = [
    'for bin in /opt/svc-managed/postgres/*/bin/postgres; do $bin --version; done',
    'redis-server --version | cut -d" " -f1-3',
    'nats-server --version',
    'P=$(ls -d /opt/svc-managed/postgres/* | tail -1)/bin',
    '$P/initdb -D /tmp/data -U postgres --auth=trust -E UTF8 --locale=C >/dev/null && echo initdb ok',
  ].join('; ');
  const result = runAs10001(images.SVC_KUBE_MANAGED_IMAGE, 'svc-managed-check', command, [`type=bind,src=${passwd},dst=/etc/passwd,options=rbind:ro`]);
  assert.equal(result.status, 0, result.stderr);
  const lines = result.stdout.trim().split('\n');
  assert.ok(lines.filter((line) => /^postgres \(PostgreSQL\) \d+\.\d+/.test(line)).length >= 1, result.stdout);
  assert.ok(lines.some((line) => /^Redis server v=7\./.test(line)), result.stdout);
  assert.ok(lines.some((line) => /^nats-server: v2\./.test(line)), result.stdout);
  assert.equal(lines.at(-1), 'initdb ok');
});

test('the server image runs svc as a workspace UID, with nginx and its Lua module beside it', { skip, timeout: 5 * 60_000 }, () => {
  assert.ok(images.SVC_KUBE_SERVER_IMAGE, 'imported by the test before');
  const command = 'svc server --help | head -n 1; node --version; nginx -V 2>&1 | head -n 1 | cut -d/ -f1; ls /usr/lib/nginx/modules | grep -c lua';
  const result = runAs10001(images.SVC_KUBE_SERVER_IMAGE, 'svc-server-check', command);
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(result.stdout.trim().split('\n'), ['Usage: svc server [options]', process.version, 'nginx version: nginx', '1']);
});
