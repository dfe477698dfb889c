import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentBinds, isInside, podPathOf, sandboxCommand, seccompParts, type SandboxSpec } from './sandbox.ts';

const spec: SandboxSpec = {
  uid: 20042,
  switchUser: true,
  netns: 'svc-ws42',
  isolateNetwork: false,
  hostname: 'ws-42',
  volumeDir: '/srv/svc/volumes/42',
  readOnlyBinds: [{ source: '/opt/project/src', target: '/opt/svc/src' }],
  env: { SVC_AGENT_PORT: '7070' },
  infoFd: 3,
  dieWithParent: false,
  script: 'exec node main.ts',
  seccomp: undefined,
};

/** The values that follow each occurrence of `flag`. */
function after(args: string[], flag: string, count = 1): string[][] {
  return args.flatMap((arg, i) => (arg === flag ? [args.slice(i + 1, i + 1 + count)] : []));
}

test('as root the pod enters its network namespace, then becomes the workspace UID with group 0 on the host', () => {
  const { file, args } = sandboxCommand(spec);
  assert.equal(file, 'nsenter');
  assert.deepEqual(args.slice(0, 10), ['--net=/run/netns/svc-ws42', '--', 'setpriv', '--reuid', '20042', '--regid', '0', '--clear-groups', 'bwrap', '--tmpfs']);
  assert.deepEqual(after(args, '--uid'), [['20042']]);
  assert.deepEqual(after(args, '--gid'), [['0']]);
});

test('without root there is no namespace of ours and no setpriv: bubblewrap maps the user itself', () => {
  const { file, args } = sandboxCommand({ ...spec, switchUser: false, netns: undefined });
  assert.equal(file, 'bwrap');
  assert.ok(!args.includes('setpriv'));
  assert.ok(!args.includes('--unshare-net'));
  assert.deepEqual(after(args, '--uid'), [['20042']]);
});

test('the root is minimal: /usr and /etc read-only, the volume at /data/app, nothing else of the host', () => {
  const { args } = sandboxCommand(spec);
  assert.deepEqual(after(args, '--ro-bind', 2), [['/usr', '/usr'], ['/etc', '/etc'], ['/opt/project/src', '/opt/svc/src']]);
  assert.deepEqual(after(args, '--bind', 2), [['/srv/svc/volumes/42', '/data/app']]);
  assert.deepEqual(after(args, '--symlink', 2), [['usr/bin', '/bin'], ['usr/lib', '/lib'], ['usr/lib64', '/lib64'], ['usr/sbin', '/sbin']]);
  assert.deepEqual(after(args, '--tmpfs'), [['/'], ['/tmp']]);
  assert.deepEqual(after(args, '--remount-ro'), [['/']]);
  assert.ok(!args.some((arg, i) => arg === '--ro-bind' && args[i + 1] === '/'), 'never the host root');
  assert.ok(args.indexOf('--remount-ro') > args.lastIndexOf('--ro-bind'), 'the root is made read-only after every mount');
});

test('a replica\'s own directory and its mounts are bound read-write after everything else, before the root turns read-only', () => {
  const { args } = sandboxCommand({
    ...spec,
    writableBinds: [{ source: '/srv/svc/pods/42/replicas/web-0', target: '/run/svc' }],
    descriptorBinds: [{ fd: 4, target: '/srv/cache' }],
  });
  assert.deepEqual(after(args, '--bind', 2), [['/srv/svc/volumes/42', '/data/app'], ['/srv/svc/pods/42/replicas/web-0', '/run/svc']]);
  assert.deepEqual(after(args, '--bind-fd', 2), [['4', '/srv/cache']]);
  assert.ok(args.indexOf('--bind-fd') > args.lastIndexOf('--ro-bind') && args.indexOf('--bind-fd') < args.indexOf('--remount-ro'));
});

test('the pod has its own PID, user, IPC and UTS namespaces and no die-with-parent: it outlives the server', () => {
  const { args } = sandboxCommand(spec);
  for (const flag of ['--unshare-pid', '--unshare-user', '--unshare-ipc', '--unshare-uts']) assert.ok(args.includes(flag), flag);
  assert.deepEqual(after(args, '--hostname'), [['ws-42']]);
  assert.ok(!args.includes('--die-with-parent'));
  assert.deepEqual(after(args, '--info-fd'), [['3']]);
  const clone = sandboxCommand({ ...spec, netns: undefined, isolateNetwork: true, dieWithParent: true, infoFd: undefined });
  assert.ok(clone.args.includes('--unshare-net') && clone.args.includes('--die-with-parent') && !clone.args.includes('--info-fd'));
});

test('the environment is cleared, then HOME is /data/app; commands run with bash -lc in /data/app', () => {
  const { args } = sandboxCommand(spec);
  assert.ok(args.indexOf('--clearenv') < args.indexOf('--setenv'));
  const env = Object.fromEntries(after(args, '--setenv', 2));
  assert.deepEqual(env, { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/data/app', LANG: 'C.UTF-8', SVC_AGENT_PORT: '7070' });
  assert.deepEqual(after(args, '--chdir'), [['/data/app']]);
  assert.deepEqual(args.slice(-3), ['bash', '-lc', 'umask 0002; exec node main.ts']);
});

test('a pod sees the agent bundle under /opt/svc, and the node binary when it is not under /usr', () => {
  assert.deepEqual(agentBinds('/data/runtime/agent-1234', '/usr/bin/node'), [{ source: '/data/runtime/agent-1234', target: '/opt/svc' }]);
  const binds = agentBinds('/data/runtime/agent-1234', '/home/me/.nvm/bin/node');
  assert.deepEqual(binds.at(-1), { source: '/home/me/.nvm/bin', target: '/home/me/.nvm/bin' });
  assert.equal(podPathOf('/data/runtime/agent-1234/main.mjs', binds), '/opt/svc/main.mjs');
  assert.equal(podPathOf('/home/me/.nvm/bin/node', binds), '/home/me/.nvm/bin/node');
  assert.equal(podPathOf('/usr/bin/node', binds), '/usr/bin/node');
  assert.equal(podPathOf('/elsewhere/tsx.mjs', binds), undefined);
});

test('isInside compares whole path segments', () => {
  assert.equal(isInside('/a/b', '/a/b'), true);
  assert.equal(isInside('/a/b', '/a/bc'), false);
});

test('with a seccomp filter an outer bash opens it above every descriptor the sandbox gets, and bubblewrap reads it there', () => {
  const { file, args } = sandboxCommand({ ...spec, seccomp: '/srv/svc/runtime/seccomp-1.bpf', descriptorBinds: [{ fd: 4, target: '/m' }, { fd: 12, target: '/n' }] });
  assert.equal(file, 'bash');
  assert.deepEqual(args.slice(0, 5), ['-c', 'exec "$@" 13<"$0"', '/srv/svc/runtime/seccomp-1.bpf', 'nsenter', '--net=/run/netns/svc-ws42']);
  assert.deepEqual(after(args, '--seccomp'), [['13']]);
  assert.deepEqual(seccompParts('/f', [3]).bwrapArgs, ['--seccomp', '10']);
  assert.deepEqual(seccompParts(undefined, [3]), { wrapper: [], bwrapArgs: [] });
});
