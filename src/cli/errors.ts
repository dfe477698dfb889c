// What can end a command, and the exit status each ends with (docs/cli.md lists them).
import type { ProblemBody } from '../core/problems.ts';

export const ExitCode = {
  ok: 0,
  /** The server answered with a problem, an operation or a stage run failed, or the person said no. */
  problem: 1,
  /** The command line is wrong, or a confirmation is needed and there is no terminal to ask on. */
  usage: 2,
  /** No stored sign-in, or the server refused the key (401). */
  notSignedIn: 3,
  /** The server could not be reached (connection refused, DNS, TLS, a proxy answering 502/503/504). */
  unreachable: 4,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    /** The server's problem, printed as `title: detail` and its errors; the message is then a fallback. */
    readonly problem?: ProblemBody,
    /** The file a landscape problem's line:column positions refer to. */
    readonly file?: string,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, ExitCode.usage);
export const failure = (message: string) => new CliError(message, ExitCode.problem);
export const notSignedIn = (message: string, problem?: ProblemBody) => new CliError(message, ExitCode.notSignedIn, problem);
export const unreachable = (message: string) => new CliError(message, ExitCode.unreachable);

/** A problem the server answered: 401 means the stored key no longer works. */
export function problemError(problem: ProblemBody, file?: string): CliError {
  if (problem.status === 401) return notSignedIn('not signed in: run "svc login" again', problem);
  return new CliError(problem.title, ExitCode.problem, problem, file);
}
