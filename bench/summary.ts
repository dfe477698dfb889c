// The table of issue 17, printed at the end of `npm run bench`: every row with what this run measured (as a ratio
// to the reference measured in the same run, where there is one) and its target, so anyone can re-check them.
// A benchmark records its rows with recordResult; a row no benchmark of this run measured says which one does.

export type SummaryRow = 'wake' | 'dev-url-wake' | 'editor-load' | 'cli' | 'api-version' | 'api-me' | 'workspace-list' | 'events' | 'ssh-round-trip' | 'ssh-scp';

interface RowTarget {
  what: string;
  target: string;
  /** The benchmark that measures it (`npm run bench -- NAME`). */
  bench: string;
}

export const summaryRows: Record<SummaryRow, RowTarget> = {
  wake: { what: 'wake of a sleeping workspace, pod and editor', target: '≤ 1.0 s to the editor answering', bench: 'workspaces' },
  'dev-url-wake': { what: 'request to a sleeping dev URL → first byte', target: '≤ 1.0 s', bench: 'workspaces' },
  'editor-load': { what: 'the editor in a fresh browser: link → workbench with its folder listed', target: '≤ 5 s first load, ≤ 2 s cached', bench: 'workspaces' },
  cli: { what: 'CLI command (svc version, svc ws list)', target: "≤ 0.15 s and ≤ node -e '' + 0.1 s", bench: 'cli' },
  'api-version': { what: 'GET /api/v1/version against a bare Node server', target: '≥ 0.85×', bench: 'api' },
  'api-me': { what: 'GET /api/v1/me with a key against bare', target: '≥ 0.6×', bench: 'api' },
  'workspace-list': { what: 'GET /workspaces, a page of 50 of 1,000, 32 connections', target: '≥ 1,000 req/s, p99 ≤ 50 ms', bench: 'lists' },
  events: { what: 'event delivery to 1,000 SSE clients', target: 'p99 < 30 ms', bench: 'events' },
  'ssh-round-trip': { what: 'ssh HOST true into a workspace against OpenSSH sshd on loopback', target: '≤ 1.5×', bench: 'ssh' },
  'ssh-scp': { what: 'scp of 100 MB into a workspace against OpenSSH sshd on loopback', target: '≥ 0.7× the throughput', bench: 'ssh' },
};

export interface Result {
  /** What was measured, with the reference of the same run: "0.09 s; node -e '' 0.05 s (+0.04 s)". */
  measured: string;
  met: boolean;
}

const results = new Map<SummaryRow, Result[]>();

export function recordResult(row: SummaryRow, result: Result): void {
  results.set(row, [...(results.get(row) ?? []), result]);
}

export function summaryLines(): string[] {
  const lines = ['', 'summary (issue 17): measured in this run against its target'];
  for (const [row, { what, target, bench }] of Object.entries(summaryRows) as [SummaryRow, RowTarget][]) {
    lines.push(`  ${what}`);
    const measured = results.get(row) ?? [];
    if (measured.length === 0) lines.push(`      not measured in this run (npm run bench -- ${bench})   target ${target}`);
    for (const result of measured) lines.push(`      ${result.met ? 'met    ' : 'MISSED '} ${result.measured}   target ${target}`);
  }
  return lines;
}
