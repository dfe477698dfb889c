// The seccomp filter every pod runs under (issue 33, item 8), in the spirit of the container runtimes' default
// profile: a pod may not make namespaces (a nested user namespace would give it root's capabilities over its own
// mounts and network), mount, load kernel modules or BPF, use the kernel keyring, watch performance counters, attach
// to other processes, reboot or set the clocks. It is classic BPF, assembled here (no native dependency): bubblewrap
// takes the compiled program on a descriptor (`--seccomp FD`) and installs it just before it runs the pod's command,
// after its own `--unshare-user`, so bubblewrap itself is not filtered.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** `struct seccomp_data`: the syscall number, the architecture, then the instruction pointer and six arguments. */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16; // little-endian: the low 32 bits of args[0]

const AUDIT_ARCH_X86_64 = 0xc000003e;
/** Syscalls of the x32 ABI carry this bit; refused as a whole, so none slips past the numbers below. */
const X32_SYSCALL_BIT = 0x40000000;

export const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
export const EPERM = 1;
export const ENOSYS = 38;

/** Namespace flags of clone(2) (its low byte is the exit signal, so CLONE_NEWTIME is not among them). */
const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
/** unshare(2) also takes CLONE_NEWTIME. */
const UNSHARE_NAMESPACE_FLAGS = CLONE_NAMESPACE_FLAGS | 0x00000080;
const PTRACE_ATTACH = 16;
const PTRACE_SEIZE = 0x4206;

/** x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
export const X86_64 = {
  clone: 56, unshare: 272, ptrace: 101,
  /** Refused with EPERM: what the container runtimes' default profile refuses. */
  refused: {
    mount: 165, umount2: 166, pivot_root: 155, chroot: 161, setns: 308,
    move_mount: 429, open_tree: 428, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
    swapon: 167, swapoff: 168, reboot: 169, acct: 163, syslog: 103, vhangup: 153,
    iopl: 172, ioperm: 173, create_module: 174, init_module: 175, delete_module: 176, get_kernel_syms: 177,
    query_module: 178, finit_module: 313, kexec_load: 246, kexec_file_load: 320,
    keyctl: 250, add_key: 248, request_key: 249,
    bpf: 321, perf_event_open: 298, userfaultfd: 323, lookup_dcookie: 212,
    quotactl: 179, quotactl_fd: 443, nfsservctl: 180, open_by_handle_at: 304, uselib: 134, ustat: 136, sysfs: 139, _sysctl: 156,
    process_vm_readv: 310, process_vm_writev: 311, clock_settime: 227, clock_adjtime: 305, settimeofday: 164,
  } as Record<string, number>,
  /**
   * Refused with ENOSYS ("not implemented"), which callers take as a cue to fall back: clone3 (its flags are in
   * memory a filter cannot read; libc then uses clone, whose flags it can) and io_uring (libuv falls back to threads).
   */
  missing: { clone3: 435, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427 } as Record<string, number>,
};

/** One instruction whose jumps name labels; `assemble` turns them into offsets. */
type Step =
  | { op: 'ld'; offset: number }
  | { op: 'jeq' | 'jge' | 'jset'; k: number; then: string; else?: string }
  | { op: 'ret'; k: number }
  | { op: 'label'; name: string };

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

/** The filter's decisions as steps: check the architecture, then the number, then the arguments that matter. */
function filterSteps(): Step[] {
  const numbers = X86_64;
  return [
    { op: 'ld', offset: ARCH },
    { op: 'jeq', k: AUDIT_ARCH_X86_64, then: 'next', else: 'enosys' }, // i386 calls (int 0x80) have other numbers
    { op: 'ld', offset: NR },
    { op: 'jge', k: X32_SYSCALL_BIT, then: 'enosys' },
    { op: 'jeq', k: numbers.clone, then: 'clone' },
    { op: 'jeq', k: numbers.unshare, then: 'unshare' },
    { op: 'jeq', k: numbers.ptrace, then: 'ptrace' },
    ...Object.values(numbers.missing).map((nr): Step => ({ op: 'jeq', k: nr, then: 'enosys' })),
    ...Object.values(numbers.refused).map((nr): Step => ({ op: 'jeq', k: nr, then: 'eperm' })),
    { op: 'ret', k: SECCOMP_RET_ALLOW },
    { op: 'label', name: 'clone' },
    { op: 'ld', offset: ARG0_LOW },
    { op: 'jset', k: CLONE_NAMESPACE_FLAGS, then: 'eperm', else: 'allow' },
    { op: 'label', name: 'unshare' },
    { op: 'ld', offset: ARG0_LOW },
    { op: 'jset', k: UNSHARE_NAMESPACE_FLAGS, then: 'eperm', else: 'allow' },
    // attaching to a running process is refused; a debugger's own child (PTRACE_TRACEME) is still traced
    { op: 'label', name: 'ptrace' },
    { op: 'ld', offset: ARG0_LOW },
    { op: 'jeq', k: PTRACE_ATTACH, then: 'eperm' },
    { op: 'jeq', k: PTRACE_SEIZE, then: 'eperm', else: 'allow' },
    { op: 'label', name: 'allow' },
    { op: 'ret', k: SECCOMP_RET_ALLOW },
    { op: 'label', name: 'eperm' },
    { op: 'ret', k: SECCOMP_RET_ERRNO | EPERM },
    { op: 'label', name: 'enosys' },
    { op: 'ret', k: SECCOMP_RET_ERRNO | ENOSYS },
  ];
}

/** `struct sock_filter` array, 8 bytes each: code (u16), jt (u8), jf (u8), k (u32), little-endian. */
export function assemble(steps: Step[]): Buffer {
  const labels = new Map<string, number>();
  const code: Array<Exclude<Step, { op: 'label' }>> = [];
  for (const step of steps) {
    if (step.op === 'label') labels.set(step.name, code.length);
    else code.push(step);
  }
  const out = Buffer.alloc(code.length * 8);
  code.forEach((step, index) => {
    const jump = (target: string | undefined) => {
      if (target === undefined || target === 'next') return 0;
      const at = labels.get(target);
      if (at === undefined || at <= index || at - index - 1 > 255) throw new Error(`seccomp: no forward jump to ${target} from ${index}`);
      return at - index - 1;
    };
    const [op, jt, jf, k] =
      step.op === 'ld' ? [BPF_LD_W_ABS, 0, 0, step.offset]
      : step.op === 'ret' ? [BPF_RET_K, 0, 0, step.k]
      : [{ jeq: BPF_JEQ_K, jge: BPF_JGE_K, jset: BPF_JSET_K }[step.op], jump(step.then), jump(step.else), step.k];
    out.writeUInt16LE(op, index * 8);
    out.writeUInt8(jt, index * 8 + 2);
    out.writeUInt8(jf, index * 8 + 3);
    out.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return out;
}

/** The pods' filter for this machine's architecture; undefined where svc has none (only x86_64 so far). */
export function podSeccompProgram(arch: string = process.arch): Buffer | undefined {
  return arch === 'x64' ? assemble(filterSteps()) : undefined;
}

/**
 * The compiled filter as a file of the data directory (`runtime/seccomp-<hash>.bpf`, named by its content, written
 * once), which the sandbox's wrapper opens for bubblewrap (sandbox.ts); undefined without a filter for this machine.
 */
export function podSeccompFile(dataDir: string): string | undefined {
  const key = path.resolve(dataDir);
  if (!written.has(key)) written.set(key, writeSeccompFile(key));
  return written.get(key);
}

const written = new Map<string, string | undefined>();

function writeSeccompFile(dataDir: string): string | undefined {
  const program = podSeccompProgram();
  if (!program) return undefined;
  const file = path.join(dataDir, 'runtime', `seccomp-${createHash('sha256').update(program).digest('hex').slice(0, 16)}.bpf`);
  const present = (() => {
    try {
      return readFileSync(file).equals(program);
    } catch {
      return false;
    }
  })();
  if (!present) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(`${file}.${process.pid}.partial`, program, { mode: 0o644 });
    renameSync(`${file}.${process.pid}.partial`, file);
  }
  return file;
}
