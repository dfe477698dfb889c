import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { EPERM, ENOSYS, podSeccompFile, podSeccompProgram, SECCOMP_RET_ALLOW, X86_64 } from './seccomp.ts';

const run = promisify(execFile);
const X86_64_ARCH = 0xc000003e;
const I386_ARCH = 0x40000003;

/** Runs a classic BPF program on a `struct seccomp_data` (the subset of BPF the filter uses). */
function decide(program: Buffer, call: { nr: number; arch?: number; args?: number[] }): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(call.nr, 0);
  data.writeUInt32LE(call.arch ?? X86_64_ARCH, 4);
  (call.args ?? []).forEach((arg, i) => data.writeBigUInt64LE(BigInt(arg), 16 + 8 * i));
  let a = 0;
  for (let pc = 0; pc < program.length / 8; pc++) {
    const [code, jt, jf, k] = [program.readUInt16LE(pc * 8), program[pc * 8 + 2], program[pc * 8 + 3], program.readUInt32LE(pc * 8 + 4)];
    if (code === 0x20) a = data.readUInt32LE(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += a === k ? jt : jf;
    else if (code === 0x35) pc += a >= k ? jt : jf;
    else if (code === 0x45) pc += (a & k) !== 0 ? jt : jf;
    else throw new Error(`instruction ${code.toString(16)} at ${pc}`);
  }
  throw new Error('the program ran off its end');
}

const errno = (n: number) => 0x00050000 | n;
const program = podSeccompProgram('x64')!;

test('the filter allows ordinary calls and refuses namespaces, mounts, modules, BPF, keys and attaching with EPERM', () => {
  for (const nr of [0, 1, 2, 9, 59, 57, 61, 231]) assert.equal(decide(program, { nr }), SECCOMP_RET_ALLOW, `syscall ${nr}`); // read, write, open, mmap, execve, fork, wait4, exit_group
  for (const name of ['mount', 'umount2', 'setns', 'keyctl', 'add_key', 'request_key', 'bpf', 'perf_event_open', 'userfaultfd', 'init_module', 'finit_module', 'kexec_load', 'reboot', 'pivot_root', 'open_tree', 'fsopen', 'process_vm_readv']) {
    assert.equal(decide(program, { nr: X86_64.refused[name] }), errno(EPERM), name);
  }
});

test('clone and unshare are refused with a namespace flag only; clone3 and io_uring read as missing', () => {
  const CLONE_NEWUSER = 0x10000000;
  const threadFlags = 0x003d0f00; // what pthread_create passes
  const forkFlags = 0x01200011; // CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD
  assert.equal(decide(program, { nr: X86_64.clone, args: [threadFlags] }), SECCOMP_RET_ALLOW);
  assert.equal(decide(program, { nr: X86_64.clone, args: [forkFlags] }), SECCOMP_RET_ALLOW);
  assert.equal(decide(program, { nr: X86_64.clone, args: [forkFlags | CLONE_NEWUSER] }), errno(EPERM));
  assert.equal(decide(program, { nr: X86_64.clone, args: [forkFlags | 0x40000000] }), errno(EPERM)); // CLONE_NEWNET
  assert.equal(decide(program, { nr: X86_64.unshare, args: [CLONE_NEWUSER] }), errno(EPERM));
  assert.equal(decide(program, { nr: X86_64.unshare, args: [0x80] }), errno(EPERM)); // CLONE_NEWTIME
  assert.equal(decide(program, { nr: X86_64.unshare, args: [0x400] }), SECCOMP_RET_ALLOW); // CLONE_FILES
  for (const name of ['clone3', 'io_uring_setup', 'io_uring_enter', 'io_uring_register']) assert.equal(decide(program, { nr: X86_64.missing[name] }), errno(ENOSYS), name);
});

test('ptrace may trace its own child but not attach to a running process', () => {
  assert.equal(decide(program, { nr: X86_64.ptrace, args: [0] }), SECCOMP_RET_ALLOW); // PTRACE_TRACEME
  assert.equal(decide(program, { nr: X86_64.ptrace, args: [16, 1] }), errno(EPERM)); // PTRACE_ATTACH
  assert.equal(decide(program, { nr: X86_64.ptrace, args: [0x4206, 1] }), errno(EPERM)); // PTRACE_SEIZE
});

test('calls of another ABI (i386 through int 0x80, x32) are refused as missing, so no number escapes the list', () => {
  assert.equal(decide(program, { nr: 310, arch: I386_ARCH }), errno(ENOSYS)); // i386 unshare
  assert.equal(decide(program, { nr: 3, arch: I386_ARCH }), errno(ENOSYS));
  assert.equal(decide(program, { nr: 0x40000000 + 272 }), errno(ENOSYS)); // x32 unshare
});

test('only x86_64 has a filter so far; the file is written once, named by its content', async () => {
  assert.equal(podSeccompProgram('arm64'), undefined);
  if (process.arch !== 'x64') return;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-seccomp-'));
  try {
    const file = podSeccompFile(dir)!;
    assert.match(path.basename(file), /^seccomp-[0-9a-f]{16}\.bpf$/);
    assert.equal(podSeccompFile(dir), file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// The kernel's own decisions: a process under bubblewrap with the filter calls the syscalls through libc (python's
// ctypes) and prints their errno; bubblewrap's own --unshare-user still works, it runs before the filter.
const syscalls = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr, *[ctypes.c_long(a) for a in args])
    return 'ok' if r >= 0 else os.strerror(ctypes.get_errno())
print('unshare(CLONE_NEWUSER)', call(272, 0x10000000))
print('unshare(CLONE_FILES)', call(272, 0x400))
print('keyctl', call(250, 0, 0))
print('bpf', call(321, 0, 0, 0))
print('clone3', call(435, 0, 0))
print('getpid', call(39))
`;

test('under bubblewrap the kernel refuses what the filter says, and bubblewrap itself still makes its user namespace', { skip: process.arch !== 'x64' && 'x86_64 only' }, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-seccomp-'));
  try {
    const file = podSeccompFile(dir)!;
    const bwrap = ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-user', '--unshare-pid', '--seccomp', '10'];
    const inPod = (command: string[]) => run('bash', ['-c', 'exec "$@" 10<"$0"', file, ...bwrap, ...command]).then((r) => r.stdout, (e: { stdout: string; stderr: string; code: number }) => `exit ${e.code}: ${e.stderr}`);
    assert.equal(await inPod(['python3', '-c', syscalls]), [
      'unshare(CLONE_NEWUSER) Operation not permitted', 'unshare(CLONE_FILES) ok', 'keyctl Operation not permitted',
      'bpf Operation not permitted', 'clone3 Function not implemented', 'getpid ok', '',
    ].join('\n'));
    assert.match(await inPod(['unshare', '-r', 'true']), /^exit 1: unshare: unshare failed: Operation not permitted/);
    const fds = (await inPod(['ls', '/proc/self/fd'])).split('\n');
    assert.ok(fds.includes('0') && !fds.includes('10'), fds.join(' ')); // bubblewrap closed the filter's descriptor
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
