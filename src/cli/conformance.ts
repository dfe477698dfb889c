// `svc conformance URL`: runs the specification's observable rules (src/conformance) against an installation with
// an administrator's key, one line per rule and a summary; exit 1 when a rule failed (docs/conformance.md).
import { conformanceRules, formatResult, runSuite, summarize, SuiteContext } from '../conformance/index.ts';
import { normalizeUrl } from './api.ts';
import type { Command } from './command.ts';
import { ExitCode, unreachable, usageError } from './errors.ts';

export const conformanceCommand: Command = {
  usage: `svc conformance URL [--token KEY] [--team T] [--repo GIT_URL] [--section S,...] [--timeout SECONDS] [--json]
  Checks that the installation at URL behaves as the specification says, with an administrator's API key (--token
  or SVC_TOKEN): creates a workspace in team T (default: the first team the key sees) and, with --repo (a git
  repository with a svc.yml the installation can clone), syncs its landscape; removes what it created. One line
  per rule (pass, fail or skip with the reason), then a summary. Exit status 1 when a rule failed.`,
  options: { token: { type: 'string' }, team: { type: 'string' }, repo: { type: 'string' }, section: { type: 'string' }, timeout: { type: 'string' } },
  positionals: [1, 1],
  async run(cli) {
    const url = normalizeUrl(cli.args.positionals[0]);
    const token = cli.args.string('token') ?? cli.env.SVC_TOKEN;
    if (!token) throw usageError('an administrator\'s API key is needed: --token KEY or SVC_TOKEN');
    const sections = (cli.args.string('section') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const timeout = cli.args.integer('timeout', 1, 3600) ?? 300;
    const context = new SuiteContext({ url, token, team: cli.args.integer('team', 1, Number.MAX_SAFE_INTEGER), repo: cli.args.string('repo'), operationTimeoutMs: timeout * 1000, sections });
    await fetch(`${url}/api/v1/version`).catch((error: Error) => {
      throw unreachable(`could not reach the server at ${url}: ${(error.cause as Error | undefined)?.message ?? error.message}`);
    });
    const { results, leftBehind } = await runSuite(conformanceRules, context, (result) => cli.say(formatResult(result)));
    const summary = summarize(results);
    for (const left of leftBehind) cli.note(`svc conformance: not cleaned up: ${left}\n`);
    if (cli.json) cli.print({ results, summary, left_behind: leftBehind });
    else cli.say(`conformance: ${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped\n`);
    return summary.failed > 0 ? ExitCode.problem : ExitCode.ok;
  },
};
