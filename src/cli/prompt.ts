// Questions on the terminal: a line (confirmations) and a secret typed without echo. Prompts go to stderr so
// that stdout stays the command's answer.
import readline from 'node:readline';
import { CliError } from './errors.ts';

interface PromptTerminal {
  stdin: NodeJS.ReadStream;
  stderr: (text: string) => void;
}

export async function askLine(terminal: PromptTerminal, question: string): Promise<string> {
  const lines = readline.createInterface({ input: terminal.stdin, terminal: false });
  terminal.stderr(question);
  try {
    return await new Promise<string>((resolve) => {
      lines.once('line', resolve);
      lines.once('close', () => resolve(''));
    });
  } finally {
    lines.close();
  }
}

/** Reads what is typed until Enter without showing it; Ctrl-C stops the command, Backspace works. */
export async function askSecret(terminal: PromptTerminal, question: string): Promise<string> {
  const input = terminal.stdin;
  terminal.stderr(question);
  input.setRawMode(true);
  input.resume();
  input.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      const onData = (chunk: string) => {
        for (const char of chunk) {
          if (char === '\r' || char === '\n' || char === '\u0004') {
            input.off('data', onData);
            return resolve(value);
          }
          if (char === '\u0003') {
            input.off('data', onData);
            return reject(new CliError('Cancelled.', 130));
          }
          if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
          else if (char >= ' ') value += char;
        }
      };
      input.on('data', onData);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
    terminal.stderr('\n');
  }
}

/** All of standard input (a secret piped in), without the one newline that `echo` adds. */
export async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
