// The YAML of a landscape file as a tree that remembers where each key and value starts. Both readers
// (yaml-block.ts for the common block style, yaml-document.ts with the yaml package for the rest) build it.
import type { Issue, Segment } from './codes.ts';
import { isExtensionKey } from './names.ts';

export type ScalarValue = string | number | boolean | null;

export interface ScalarNode {
  readonly kind: 'scalar';
  readonly value: ScalarValue;
  /** Offset of the value; for an empty value, of its key (or of the `-` of a list item). */
  readonly offset: number;
}

export interface MapEntry {
  readonly key: string;
  readonly keyOffset: number;
  readonly value: YamlNode;
}

export interface MapNode {
  readonly kind: 'map';
  /** In file order, `x-` keys left out, merge keys (`<<`) applied. */
  readonly entries: readonly MapEntry[];
  readonly offset: number;
}

export interface SeqNode {
  readonly kind: 'seq';
  readonly items: readonly YamlNode[];
  readonly offset: number;
}

export type YamlNode = ScalarNode | MapNode | SeqNode;

/** A text value holding `${{`, and where it is: the block reader collects them while reading. */
export interface TemplatedScalar {
  node: ScalarNode;
  path: Segment[];
}

/** Deepest nesting a landscape file may use; svc/v1 itself needs 7 levels. */
export const maxDepth = 64;

export const scalarNode = (value: ScalarValue, offset: number): ScalarNode => ({ kind: 'scalar', value, offset });

/** Collects the entries of one map: drops `x-` keys and tells about duplicate keys. */
export class EntryList {
  readonly entries: MapEntry[] = [];
  private keys: Set<string> | null = null;

  /** Adds the entry; returns the earlier entry with the same key instead when there is one. */
  add(key: string, keyOffset: number, value: YamlNode): MapEntry | undefined {
    if (isExtensionKey(key)) return undefined;
    const earlier = this.find(key);
    if (earlier !== undefined) return earlier;
    this.entries.push({ key, keyOffset, value });
    this.keys?.add(key);
    return undefined;
  }

  has(key: string): boolean {
    return this.find(key) !== undefined;
  }

  private find(key: string): MapEntry | undefined {
    const entries = this.entries;
    if (this.keys === null && entries.length < 12) {
      for (let i = 0; i < entries.length; i++) if (entries[i].key === key) return entries[i];
      return undefined;
    }
    if (this.keys === null) this.keys = new Set(entries.map((entry) => entry.key));
    return this.keys.has(key) ? entries.find((entry) => entry.key === key) : undefined;
  }
}

export function duplicateKeyIssue(path: Segment[], key: string, offset: number): Issue {
  return {
    code: 'duplicate-key',
    offset,
    path: [...path, key],
    subject: key,
    message: `key "${key}" appears twice in ${path.length === 0 ? 'the file' : 'the same map'}; keep one`,
  };
}

export function entryOf(node: YamlNode | undefined, key: string): MapEntry | undefined {
  if (node === undefined || node.kind !== 'map') return undefined;
  const entries = node.entries;
  for (let i = 0; i < entries.length; i++) if (entries[i].key === key) return entries[i];
  return undefined;
}

export const valueOf = (node: YamlNode | undefined, key: string): YamlNode | undefined => entryOf(node, key)?.value;

export function stringOf(node: YamlNode | undefined): string | undefined {
  return node !== undefined && node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
}

export function numberOf(node: YamlNode | undefined): number | undefined {
  return node !== undefined && node.kind === 'scalar' && typeof node.value === 'number' ? node.value : undefined;
}

export function itemsOf(node: YamlNode | undefined): readonly YamlNode[] {
  return node !== undefined && node.kind === 'seq' ? node.items : [];
}

export function entriesOf(node: YamlNode | undefined): readonly MapEntry[] {
  return node !== undefined && node.kind === 'map' ? node.entries : [];
}

/** The plain value of a node: what JSON.parse would give for the same data. */
export function plainValue(node: YamlNode): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'seq') {
    const items = new Array<unknown>(node.items.length);
    for (let i = 0; i < items.length; i++) items[i] = plainValue(node.items[i]);
    return items;
  }
  const out: Record<string, unknown> = {};
  const entries = node.entries;
  for (let i = 0; i < entries.length; i++) setOwn(out, entries[i].key, plainValue(entries[i].value));
  return out;
}

/** Sets a key as an own property, `__proto__` included (a valid env variable name). */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}

export function mapValues<T, U>(record: Readonly<Record<string, T>>, change: (value: T, key: string) => U): Record<string, U> {
  const out: Record<string, U> = {};
  for (const key of Object.keys(record)) setOwn(out, key, change(record[key], key));
  return out;
}

/** RFC 6901 JSON Pointer of a path. */
export function jsonPointer(path: readonly Segment[]): string {
  let out = '';
  for (const segment of path) out += '/' + String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
  return out;
}

/** Turns offsets into 1-based lines and columns. */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(private readonly text: string) {
    let at = text.indexOf('\n');
    while (at !== -1) {
      this.starts.push(at + 1);
      at = text.indexOf('\n', at + 1);
    }
  }

  get lineCount(): number {
    return this.starts.length;
  }

  position(offset: number): { line: number; column: number } {
    const at = Math.max(0, Math.min(offset, this.text.length));
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle] <= at) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: at - this.starts[low] + 1 };
  }
}
