// RFC 9457 problems (spec 7) as thrown errors, told apart by their `type`: the union of the server's problem types
// comes from the OpenAPI document, so `problem.is('name-taken')` is checked against the names the server has.
import type { FieldError, Problem } from './resources.ts';

/** `urn:svc:problem:<name>` of every problem the server answers. */
export type ProblemType = Problem['type'];
/** The `<name>` part: `validation`, `not-found`, `name-taken` ... */
export type ProblemName = ProblemType extends `urn:svc:problem:${infer Name}` ? Name : never;
/** What a client makes of an answer that is no problem of svc's (a proxy's 502, the network): RFC 9457's default. */
export const NOT_A_PROBLEM = 'about:blank';

export class SvcProblem extends Error {
  /** The problem's type; `about:blank` when the answer was not svc's, or a type this SDK does not know yet. */
  readonly type: ProblemType | typeof NOT_A_PROBLEM | (string & {});
  readonly title: string;
  /** The HTTP status; 0 when the server could not be reached. */
  readonly status: number;
  readonly detail?: string;
  readonly errors: FieldError[];
  /** The whole problem, extension members (`secrets`, `retry_after` ...) included. */
  readonly body: Problem | { type: string; title: string; status: number; detail?: string; [extra: string]: unknown };

  constructor(body: SvcProblem['body']) {
    super(body.detail ? `${body.title}: ${body.detail}` : body.title);
    this.name = 'SvcProblem';
    this.type = body.type;
    this.title = body.title;
    this.status = body.status;
    this.detail = body.detail;
    this.errors = (body as Problem).errors ?? [];
    this.body = body;
  }

  /** Whether this is the problem `urn:svc:problem:<name>`. */
  is(name: ProblemName): boolean {
    return this.type === `urn:svc:problem:${name}`;
  }

  /** The message of the field error at `pointer` (a JSON Pointer into the request body), if any. */
  fieldError(pointer: string): string | undefined {
    return this.errors.find((e) => e.pointer === pointer)?.message;
  }
}

/** Whether `error` is a problem, and (given `name`) that one. */
export function isProblem(error: unknown, name?: ProblemName): error is SvcProblem {
  return error instanceof SvcProblem && (name === undefined || error.is(name));
}

/** The problem of a failed answer whose body was read as `body` (JSON when it was JSON, else text or nothing). */
export function problemOfAnswer(status: number, statusText: string, body: unknown): SvcProblem {
  if (body && typeof body === 'object' && typeof (body as Problem).title === 'string') {
    const problem = body as Problem;
    return new SvcProblem({ ...problem, type: problem.type ?? NOT_A_PROBLEM, status });
  }
  const line = typeof body === 'string' ? body.split('\n')[0].trim().slice(0, 200) : '';
  return new SvcProblem({ type: NOT_A_PROBLEM, status, title: statusText || `Error ${status}`, detail: line || undefined });
}

/** The network failed before an answer came. */
export function unreachableProblem(error: unknown): SvcProblem {
  const cause = (error as { cause?: { message?: string; code?: string } }).cause;
  const detail = cause?.message || cause?.code || (error as Error)?.message || String(error);
  return new SvcProblem({ type: NOT_A_PROBLEM, status: 0, title: 'The server could not be reached', detail });
}
