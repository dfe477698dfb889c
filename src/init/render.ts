// The draft as svc.yml text: a header saying where it came from, what needs checking and what was not mapped, then
// the landscape, each service under a comment naming the file it came from.
import { Document, isMap, isScalar, type Pair, type YAMLMap } from 'yaml';
import type { Draft, DraftService } from './draft.ts';

const wrap = (text: string, width = 110): string[] => {
  const lines: string[] = [];
  let line = '';
  // a template (`${{ services.db.dsn }}`) stays on one line
  const words = text.replace(/\$\{\{[^}]*\}\}/g, (t) => t.replace(/ /g, '\u00a0')).split(' ').map((w) => w.replace(/\u00a0/g, ' '));
  for (const word of words) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = `  ${word}`;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
};

// No `yaml-language-server: $schema=` line: the workspace's editor validates svc.yml with its built-in schema, and a
// console address may not be reachable from the pod (docs/decisions.md, "svc init writes no schema line").
function header(draft: Draft): string {
  const lines = [
    ` Written by svc init from ${draft.sources.join(', ')}. Check it, then: svc lint && svc sync`,
    ' Reference: docs/svc-yml.md (every key, with its default and bounds).',
  ];
  if (draft.assumptions.length) lines.push('', ' Check these assumptions:', ...draft.assumptions.flatMap((a) => wrap(`- ${a}`).map((l) => ` ${l}`)));
  if (draft.unmapped.length) lines.push('', ' Not mapped (do it by hand where you need it):', ...draft.unmapped.flatMap((u) => wrap(`- ${u}`).map((l) => ` ${l}`)));
  return lines.join('\n');
}

/** Keys in the order the reference lists them, so files read alike. */
function ordered(service: DraftService): Record<string, unknown> {
  const order = ['type', 'provider', 'providerVersion', 'config', 'image', 'command', 'args', 'env', 'ports', 'mounts', 'needs', 'steps'];
  const entries = Object.entries(service).filter(([, value]) => value !== undefined);
  return Object.fromEntries(entries.sort(([a], [b]) => order.indexOf(a) - order.indexOf(b)));
}

export function renderDraft(draft: Draft): string {
  const content: Record<string, unknown> = { schema: 'svc/v1' };
  if (draft.prepare.length) content.prepare = draft.prepare;
  if (draft.test.length) content.test = draft.test;
  if (draft.services.size) content.services = Object.fromEntries([...draft.services].map(([name, { service }]) => [name, ordered(service)]));
  const document = new Document(content);
  document.commentBefore = header(draft);
  const services = document.get('services', true);
  if (isMap(services)) {
    for (const pair of (services as YAMLMap).items as Pair[]) {
      const name = isScalar(pair.key) ? String(pair.key.value) : '';
      const origin = draft.services.get(name)?.origin;
      if (origin && isScalar(pair.key)) pair.key.commentBefore = ` from ${origin}`;
    }
  }
  return document.toString({ lineWidth: 0 });
}
