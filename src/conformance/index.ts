// `svc conformance`: the specification's observable rules in the order they run (later rules use what earlier ones
// made: the event stream, the workspace, the landscape), and the report of a run.
import { authenticationRules, notFoundRules } from './rules/authentication.ts';
import { paginationRules, withoutCredentialsRules } from './rules/conventions.ts';
import { deletedEventRules, landscapeEventRules, streamRules, workspaceEventRules } from './rules/events.ts';
import { landscapeRules, teardownRules } from './rules/landscape-sync.ts';
import { badInputRules, everyAnswerRules } from './rules/problems.ts';
import { endOfLifeRules, lifecycleRules } from './rules/workspace-lifecycle.ts';
import type { Rule, RuleResult } from './suite.ts';

export { runSuite, SuiteContext, type Rule, type RuleResult, type SuiteOptions } from './suite.ts';

export const conformanceRules: Rule[] = [
  ...withoutCredentialsRules,
  ...authenticationRules,
  ...notFoundRules,
  ...badInputRules,
  ...streamRules,
  ...lifecycleRules,
  ...paginationRules,
  ...workspaceEventRules,
  ...landscapeRules,
  ...landscapeEventRules,
  ...teardownRules,
  ...endOfLifeRules,
  ...deletedEventRules,
  ...everyAnswerRules,
];

/** `pass  4.1   the rule` / `fail  7     the rule: why`. */
export function formatResult(result: RuleResult): string {
  const { outcome } = result;
  const why = outcome.status === 'pass' ? '' : `: ${outcome.reason}`;
  return `${outcome.status.padEnd(5)} ${result.section.padEnd(5)} ${result.title}${why}\n`;
}

export function summarize(results: RuleResult[]): { passed: number; failed: number; skipped: number } {
  const count = (status: string) => results.filter((r) => r.outcome.status === status).length;
  return { passed: count('pass'), failed: count('fail'), skipped: count('skip') };
}
