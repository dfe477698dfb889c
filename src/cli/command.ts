// The frame every API command runs in: its arguments, the terminal, the signed-in client, and one place that turns
// what ended a command into its message and exit status.
import { isatty } from 'node:tty';
import { parseArgs } from 'node:util';
import { Api, normalizeUrl } from './api.ts';
import { readLogin } from './config.ts';
import { CliError, ExitCode, notSignedIn, usageError } from './errors.ts';
import { didYouMean } from '../core/suggest.ts';
import { formatProblem } from './output.ts';

export interface Terminal {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadStream;
  stdinIsTty: boolean;
  stderrIsTty: boolean;
}

/** The process's terminal. process.stdin is made only when a command reads it (a prompt, a secret, svc exec -i). */
export function processTerminal(cwd = process.cwd()): Terminal {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    cwd,
    env: process.env,
    get stdin() {
      return process.stdin;
    },
    stdinIsTty: isatty(0),
    stderrIsTty: isatty(2),
  };
}

type OptionTypes = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

export interface Command {
  /** `svc ws rename WS NAME [--team T]` and what it does, shown by --help and on usage errors. */
  usage: string;
  options?: OptionTypes;
  /** How many positional arguments it takes: [at least, at most]. */
  positionals?: [number, number];
  run(cli: Cli): Promise<number | void>;
}

export class Args {
  constructor(
    readonly positionals: string[],
    private readonly values: Record<string, string | boolean | string[] | undefined>,
  ) {}

  string(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === 'string' ? value : undefined;
  }

  /** Every value of an option given several times (`multiple: true`), in order. */
  strings(name: string): string[] {
    const value = this.values[name];
    return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  integer(name: string, min: number, max: number): number | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min || value > max) throw usageError(`--${name} takes a whole number from ${min} to ${max}`);
    return value;
  }
}

export class Cli {
  private client?: Api;

  constructor(
    readonly terminal: Terminal,
    readonly args: Args,
  ) {}

  get json(): boolean {
    return this.args.flag('json');
  }
  get env(): NodeJS.ProcessEnv {
    return this.terminal.env;
  }

  /** Text for people on stdout; with --json only `print` writes there. */
  say(text: string): void {
    if (!this.json) this.terminal.stdout(text);
  }
  /** The machine-readable answer with --json. */
  print(value: unknown): void {
    this.terminal.stdout(`${JSON.stringify(value, null, 2)}\n`);
  }
  note(text: string): void {
    this.terminal.stderr(text);
  }

  /** The signed-in client: SVC_TOKEN (with SVC_URL or the stored address), else what `svc login` stored. */
  async api(): Promise<Api> {
    if (this.client) return this.client;
    const env = this.env;
    const wanted = env.SVC_URL ? normalizeUrl(env.SVC_URL) : undefined;
    const warn = (text: string) => this.note(text);
    // SVC_URL with SVC_TOKEN is the whole sign-in: the stored login file is not read (a broken one does not matter)
    if (env.SVC_TOKEN && wanted) return (this.client = new Api(wanted, env.SVC_TOKEN, warn));
    const stored = await readLogin(env);
    if (env.SVC_TOKEN) {
      const url = stored?.url;
      if (!url) throw usageError('SVC_TOKEN needs SVC_URL, the console address it belongs to');
      return (this.client = new Api(url, env.SVC_TOKEN, warn));
    }
    if (!stored) throw notSignedIn('not signed in: run "svc login URL" first (or set SVC_URL and SVC_TOKEN)');
    if (wanted && wanted !== stored.url) throw notSignedIn(`not signed in to ${wanted} (signed in to ${stored.url}): run "svc login ${wanted}"`);
    return (this.client = new Api(stored.url, stored.token, warn));
  }

  /** Asks before something that cannot be undone; --yes answers for the person. Without a terminal: usage error. */
  async confirm(question: string, action: string): Promise<void> {
    if (this.args.flag('yes')) return;
    if (!this.terminal.stdinIsTty) throw usageError(`not ${action} without a confirmation: standard input is not a terminal; pass --yes to go ahead`);
    const { askLine } = await import('./prompt.ts');
    const answer = await askLine(this.terminal, `${question} [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('Nothing was changed.', ExitCode.problem);
  }
}

const commonOptions: OptionTypes = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };

/** Parses, runs and reports: the exit status of docs/cli.md. */
export async function runCommand(command: Command, argv: string[], terminal: Terminal): Promise<number> {
  let args: Args;
  try {
    const parsed = parseArgs({ args: argv, options: { ...commonOptions, ...command.options }, allowPositionals: true, strict: true });
    args = new Args(parsed.positionals, parsed.values as Record<string, string | boolean | string[] | undefined>);
    const [min, max] = command.positionals ?? [0, 0];
    if (args.flag('help')) {
      terminal.stdout(`Usage: ${command.usage}\n`);
      return ExitCode.ok;
    }
    if (args.positionals.length < min) throw usageError('missing arguments');
    if (args.positionals.length > max) throw usageError(`unexpected argument "${args.positionals[max]}"`);
  } catch (error) {
    const message = error instanceof CliError ? error.message : (error as Error).message;
    terminal.stderr(`svc: ${message}\nUsage: ${command.usage}\n`);
    return ExitCode.usage;
  }
  const cli = new Cli(terminal, args);
  try {
    return (await command.run(cli)) ?? ExitCode.ok;
  } catch (error) {
    return report(cli, error);
  }
}

function report(cli: Cli, failure: unknown): number {
  // A connection that breaks while an answer streams (a log, the event stream) is the server gone away.
  const broken = failure instanceof TypeError && /terminated|fetch failed|socket/i.test(failure.message);
  const error = broken ? new CliError(`the connection to the server broke: ${failure.message}`, ExitCode.unreachable) : failure;
  if (!(error instanceof CliError)) throw error;
  if (error.problem) {
    if (cli.json) cli.print({ problem: error.problem });
    cli.note(formatProblem(error.problem, error.file));
    if (error.exitCode === ExitCode.notSignedIn) cli.note(`svc: ${error.message}\n`);
  } else {
    if (cli.json) cli.print({ error: error.message, exit_code: error.exitCode });
    cli.note(`svc: ${error.message}\n`);
  }
  return error.exitCode;
}

/** A group such as `svc ws list|create|...`: the first argument picks the command. */
export async function runGroup(name: string, commands: Record<string, Command>, argv: string[], terminal: Terminal): Promise<number> {
  const [sub, ...rest] = argv;
  const command = sub !== undefined && Object.hasOwn(commands, sub) ? commands[sub] : undefined;
  if (command) return runCommand(command, rest, terminal);
  const list = Object.values(commands).map((c) => `  ${c.usage.split('\n')[0]}`).join('\n');
  const help = sub === '--help' || sub === '-h' || sub === 'help';
  const complaint = sub === undefined ? `svc ${name}: which command?\n` : `svc ${name}: unknown command "${sub}".${didYouMean(sub, Object.keys(commands))}\n`;
  (help ? terminal.stdout : terminal.stderr)(`${help ? '' : complaint}Usage:\n${list}\n`);
  return help ? ExitCode.ok : ExitCode.usage;
}
