// Words for errors: where something is ("replicas of service web"), what a value is, and which known name
// a misspelt one probably meant.
import type { Segment } from './codes.ts';
import type { YamlNode } from './yaml-tree.ts';

export { closestName, listWords } from '../core/suggest.ts';

/** "the file", "schema", "prepare[0].run", "service web", "ports[0].port of service web". */
export function describePath(path: readonly Segment[]): string {
  if (path.length === 0) return 'the file';
  if (path[0] === 'services' && path.length >= 2) {
    const service = `service ${String(path[1])}`;
    return path.length === 2 ? service : `${dotted(path.slice(2))} of ${service}`;
  }
  return dotted(path);
}

function dotted(path: readonly Segment[]): string {
  let out = '';
  for (const segment of path) out += typeof segment === 'number' ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  return out;
}

/** The service an error is about, or else the top-level key. */
export function subjectOf(path: readonly Segment[]): string {
  if (path[0] === 'services' && path.length >= 2) return String(path[1]);
  return path.length > 0 ? String(path[0]) : '';
}

/** A short, quoted description of a value for messages. */
export function describeValue(node: YamlNode): string {
  if (node.kind === 'map') return 'a map';
  if (node.kind === 'seq') return 'a list';
  const value = node.value;
  if (value === null) return 'nothing (an empty value)';
  if (typeof value === 'string') return `the text ${quote(value)}`;
  if (typeof value === 'number') return Number.isFinite(value) ? `the number ${String(value)}` : `the number ${value > 0 ? '.inf' : value < 0 ? '-.inf' : '.nan'}`;
  return String(value);
}

/** A value in quotes, cut to a readable length. */
export function quote(text: string): string {
  const short = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return JSON.stringify(short);
}

