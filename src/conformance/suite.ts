// The conformance suite's frame: a rule names the spec section it checks and either passes, fails with a reason or
// is skipped with a reason; rules run in order and share what earlier ones made (the workspace, the event stream)
// through the context, which also undoes what the suite created.
import { parse as parseYaml } from 'yaml';
import { ConformanceHttp, type Exchange } from './http.ts';
import { EventRecorder } from './events-recorder.ts';

export interface Rule {
  /** Section of the specification, e.g. `4.1`. */
  section: string;
  /** The rule as a sentence: what a correct installation does. */
  title: string;
  run(context: SuiteContext): Promise<void>;
}

export type Outcome = { status: 'pass' } | { status: 'fail'; reason: string } | { status: 'skip'; reason: string };

export interface RuleResult {
  section: string;
  title: string;
  outcome: Outcome;
}

/** Thrown by a rule whose check did not hold. */
export class RuleFailure extends Error {}
/** Thrown by a rule that cannot be checked here (the reason says why). */
export class RuleSkipped extends Error {}

export const fail = (reason: string): never => {
  throw new RuleFailure(reason);
};
export const skip = (reason: string): never => {
  throw new RuleSkipped(reason);
};
export function check(condition: unknown, reason: string): asserts condition {
  if (!condition) throw new RuleFailure(reason);
}

/** `GET /x answered 500 text/html` for failure reasons. */
export const described = (exchange: Exchange) =>
  `${exchange.method} /api/v1${exchange.path} answered ${exchange.status}${exchange.body?.type ? ` ${exchange.body.type}` : ''}`;

export interface SuiteOptions {
  url: string;
  token: string;
  /** Team (id) the workspace is created in; the first team the key can see when absent. */
  team?: number;
  /** A git repository holding a svc.yml, cloned into the workspace for the landscape rules. */
  repo?: string;
  /** How long an operation may take before its rule fails. */
  operationTimeoutMs: number;
  /** Sections to run (prefixes: `4` runs 4.1 and 4.5); all when empty. */
  sections: string[];
}

export interface WorkspaceUnderTest {
  id: number;
  teamId: number;
  name: string;
  createOperation: string;
}

export class SuiteContext {
  readonly http: ConformanceHttp;
  /** The live event stream once the events rules opened it. */
  events?: EventRecorder;
  /** Why there is no event stream, for the rules that need one. */
  eventsMissing = 'the event stream rule did not run';
  workspace?: WorkspaceUnderTest;
  /** The first create's request, for the Idempotency-Key rules. */
  creation?: { idempotencyKey: string; body: Record<string, unknown>; operationId: string };
  /** Set when creating the workspace failed: the rules that need it say so. */
  workspaceMissing = 'the workspace rules did not run';
  private openapi?: Record<string, any>;
  private readonly cleanups: Array<{ what: string; undo: () => Promise<void> }> = [];

  constructor(readonly options: SuiteOptions) {
    this.http = new ConformanceHttp(options.url, options.token);
  }

  /** The workspace made by the lifecycle rules, or a skip saying why there is none. */
  needWorkspace(): WorkspaceUnderTest {
    return this.workspace ?? skip(`no workspace to check: ${this.workspaceMissing}`);
  }

  /** The served OpenAPI document (spec 9.3), read once. */
  async openapiDocument(): Promise<Record<string, any>> {
    if (this.openapi) return this.openapi;
    const answer = await this.http.get('/openapi.yaml', { anonymous: true });
    check(answer.status === 200, `${described(answer)}, not 200`);
    this.openapi = parseYaml(answer.text) as Record<string, any>;
    return this.openapi;
  }

  /**
   * Whether the OpenAPI document lists `method path` (path as the document writes it, e.g. `/workspaces/{ws}/purge`):
   * operations the spec does not name are used only when the installation documents them.
   */
  async documents(method: string, path: string): Promise<boolean> {
    const document = await this.openapiDocument().catch(() => undefined);
    const paths = (document?.paths ?? {}) as Record<string, Record<string, unknown>>;
    const pattern = new RegExp(`^(/api/v1)?${path.replace(/\{[^}]+\}/g, '\\{[^}]+\\}')}$`);
    return Object.entries(paths).some(([documented, operations]) => pattern.test(documented) && method.toLowerCase() in operations);
  }

  /** Polls an operation (spec 2.4) until it ends; fails the rule when it has not ended in time. */
  async operationEnded(id: string): Promise<Record<string, any>> {
    return this.until(async () => {
      const answer = await this.http.get(`/operations/${id}`);
      check(answer.status === 200, `${described(answer)} while following the operation`);
      return ['succeeded', 'failed'].includes(answer.body?.state) ? answer.body : undefined;
    }, `operation ${id} to end`);
  }

  /** Polls `probe` every half second until it returns a value; fails with `what` after the operation timeout. */
  async until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
    const deadline = Date.now() + this.options.operationTimeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) fail(`waited ${Math.round(this.options.operationTimeoutMs / 1000)} s for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  /** Registers how to undo something the suite created; undone last-first by `cleanUp`. */
  onCleanup(what: string, undo: () => Promise<void>): void {
    this.cleanups.push({ what, undo });
  }

  /** Undoes everything; returns what could not be undone. */
  async cleanUp(): Promise<string[]> {
    const left: string[] = [];
    for (const { what, undo } of this.cleanups.reverse()) {
      await undo().catch((error: Error) => left.push(`${what}: ${error.message}`));
    }
    this.events?.close();
    return left;
  }
}

function outcomeOf(error: unknown): Outcome {
  if (error instanceof RuleSkipped) return { status: 'skip', reason: error.message };
  if (error instanceof RuleFailure) return { status: 'fail', reason: error.message };
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return { status: 'fail', reason: `${(error as Error).message}${cause ? ` (${cause.message ?? cause.code})` : ''}` };
}

const selected = (rule: Rule, sections: string[]) =>
  sections.length === 0 || sections.some((s) => rule.section === s || rule.section.startsWith(`${s}.`));

/** Runs the rules in order, reporting each result as it comes, then cleans up. */
export async function runSuite(
  rules: Rule[],
  context: SuiteContext,
  report: (result: RuleResult) => void,
): Promise<{ results: RuleResult[]; leftBehind: string[] }> {
  const results: RuleResult[] = [];
  let leftBehind: string[] = [];
  try {
    for (const rule of rules.filter((r) => selected(r, context.options.sections))) {
      let outcome: Outcome;
      try {
        await rule.run(context);
        outcome = { status: 'pass' };
      } catch (error) {
        outcome = outcomeOf(error);
      }
      const result = { section: rule.section, title: rule.title, outcome };
      results.push(result);
      report(result);
    }
  } finally {
    leftBehind = await context.cleanUp();
  }
  return { results, leftBehind };
}
