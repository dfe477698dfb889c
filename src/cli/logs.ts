// `svc logs SERVICE [-f] [--replica N] [--tail N]`: a replica's log, each line after its local time; -f follows it (JSON
// lines streamed by the server) and reads on from the last line seen when the connection breaks.
import type { LogLine } from '../../sdk/src/index.ts';
import type { Command } from './command.ts';
import { CliError, ExitCode, failure, unreachable } from './errors.ts';
import { sleep } from './operations.ts';
import { logTime } from './output.ts';
import { formatLogLine, logLines } from './streams.ts';
import { selectedWorkspace, workspaceOptions } from './targets.ts';

export const logsCommand: Command = {
  usage: `svc logs SERVICE [--ws WS] [-f] [--replica N] [--tail N] [--since SEQ] [--no-timestamps] [--json]
  A replica's log (replica 0 unless --replica), each line after its local time (HH:MM:SS.mmm, the date in front
  when not today). -f keeps following it; --no-timestamps prints the lines alone; --json prints each line as JSON.`,
  options: {
    ...workspaceOptions,
    follow: { type: 'boolean', short: 'f' },
    replica: { type: 'string' },
    tail: { type: 'string' },
    since: { type: 'string' },
    'no-timestamps': { type: 'boolean' },
  },
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    const workspace = await selectedWorkspace(cli, api);
    const service = cli.args.positionals[0];
    const route = '/api/v1/workspaces/{ws}/landscape/services/{service}/logs';
    const path = { ws: workspace.id, service };
    const replica = cli.args.integer('replica', 0, 99);
    const tail = cli.args.integer('tail', 1, 10000);
    let since = cli.args.integer('since', 0, Number.MAX_SAFE_INTEGER);
    const stamped = !cli.args.flag('no-timestamps');
    const show = (line: LogLine) =>
      cli.terminal.stdout(cli.json ? `${JSON.stringify(line)}\n` : `${stamped ? `${logTime(line.at)} ` : ''}${formatLogLine(line)}`);
    if (!cli.args.flag('follow')) {
      const page = await api.answer(api.client.GET(route, { params: { path, query: { replica, tail, since } } }));
      if (!('lines' in page)) throw failure(`${api.url} answered no log page`);
      if (cli.json) return cli.print(page);
      if (page.dropped > 0) cli.note(`(${page.dropped} earlier lines not shown)\n`);
      page.lines.forEach(show);
      return;
    }
    // Follows until interrupted; a broken connection is opened again after a growing pause.
    for (let attempt = 0; ; attempt++) {
      try {
        const first = since === undefined;
        const query = { replica, follow: true, tail: first ? tail : undefined, since };
        const response = await api.stream(api.client.GET(route, { params: { path, query }, parseAs: 'stream', headers: { accept: 'application/x-ndjson' } }), 'application/x-ndjson');
        for await (const line of logLines(response)) {
          show(line);
          since = line.seq;
          attempt = 0;
        }
      } catch (error) {
        if (error instanceof CliError && error.exitCode !== ExitCode.unreachable) throw error;
        if (attempt >= 8) throw error instanceof CliError ? error : unreachable(`the log stream broke: ${(error as Error).message}`);
      }
      since ??= 0;
      await sleep(Math.min(10_000, 500 * 2 ** attempt));
    }
  },
};
