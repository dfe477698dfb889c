// Long operations (spec 2.4): followed by polling GET /operations/{id} until they succeed or fail, showing their
// `detail` on a spinner (a terminal), as plain lines (a log), or nothing (--json).
import type { Operation } from '../../sdk/src/index.ts';
import type { ProblemBody } from '../core/problems.ts';
import type { Api } from './api.ts';
import type { Cli } from './command.ts';
import { CliError, ExitCode, failure } from './errors.ts';

const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** One status line that changes: a spinner on a terminal's stderr, else each new text once as a line. */
export class Progress {
  private text = '';
  private frame = 0;
  private timer?: NodeJS.Timeout;
  private readonly mode: 'spinner' | 'lines' | 'quiet';

  constructor(private readonly cli: Cli) {
    this.mode = cli.json ? 'quiet' : cli.terminal.stderrIsTty ? 'spinner' : 'lines';
  }

  update(text: string): void {
    if (text === this.text) return;
    this.text = text;
    if (this.mode === 'lines') this.cli.note(`  ${text}\n`);
    if (this.mode !== 'spinner') return;
    this.draw();
    this.timer ??= setInterval(() => this.draw(), 80);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.mode === 'spinner' && this.text) this.cli.note('\r\x1b[2K');
    this.text = '';
  }

  private draw(): void {
    this.frame = (this.frame + 1) % frames.length;
    this.cli.note(`\r\x1b[2K${frames[this.frame]} ${this.text}`);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for the operation to end; a failed one throws its problem (exit 1). */
export async function followOperation(cli: Cli, api: Api, started: Operation, label: string, file?: string): Promise<Operation> {
  const progress = new Progress(cli);
  let operation = started;
  let delay = 150;
  // Ctrl-C stops following, not the operation: say so, and where to look it up.
  const interrupted = () => {
    progress.stop();
    cli.note(`svc: stopped following; operation ${operation.id} goes on on the server\n`);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  try {
    while (operation.state === 'pending' || operation.state === 'running') {
      progress.update(`${label}: ${operation.detail ?? (operation.state === 'pending' ? 'waiting to start' : 'running')}`);
      await sleep(delay);
      delay = Math.min(1000, delay * 1.5);
      operation = await api.answer(api.client.GET('/api/v1/operations/{id}', { params: { path: { id: operation.id } } }));
    }
  } finally {
    process.off('SIGINT', interrupted);
    progress.stop();
  }
  if (operation.state === 'failed') {
    if (operation.error) throw new CliError(operation.error.title, ExitCode.problem, operation.error, file);
    throw failure(`${label} failed`);
  }
  return operation;
}
