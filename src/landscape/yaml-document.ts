// Reads any YAML with the yaml package and turns it into the landscape tree: syntax errors with their place,
// anchors and aliases (guarded against cycles and alias bombs), merge keys (`<<`), duplicate keys, `x-` keys.
import { isAlias, isMap, isScalar, isSeq, parseDocument, type Alias, type Document, type Node, type Pair } from 'yaml';
import type { Issue, Segment } from './codes.ts';
import { duplicateKeyIssue, EntryList, maxDepth, scalarNode, type MapNode, type YamlNode } from './yaml-tree.ts';

export function readYamlDocument(text: string): { root: YamlNode | null; issues: Issue[] } {
  let document: Document.Parsed;
  try {
    document = parseDocument(text, { uniqueKeys: false, prettyErrors: false, strict: true, version: '1.2' });
  } catch {
    // The yaml package may run out of stack on absurd nesting; say so rather than throw.
    return { root: null, issues: [{ code: 'yaml-syntax', offset: 0, path: [], message: 'the file nests too deeply to be read as YAML' }] };
  }
  const problems = [...document.errors, ...document.warnings];
  if (problems.length > 0) {
    const issues = problems.map((problem): Issue => ({ code: 'yaml-syntax', offset: problem.pos[0], path: [], message: syntaxMessage(problem.code, problem.message, text, problem.pos[0]) }));
    return { root: null, issues: oncePerLine(issues, text) };
  }
  const reader = new DocumentReader(text, aliasTargets(document.contents));
  const root = document.contents === null ? null : reader.node(document.contents, 0, 0);
  return { root, issues: reader.issues };
}

/** The same message twice on one line says nothing new (`run: echo a: b: c` has two colons after the first). */
function oncePerLine(issues: Issue[], text: string): Issue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${text.lastIndexOf('\n', issue.offset - 1)} ${issue.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

/** The line holding `offset`, trimmed and shortened, for a message that quotes it. */
function lineAt(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  const end = text.indexOf('\n', offset);
  const line = text.slice(start, end === -1 ? undefined : end).trim();
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}

function syntaxMessage(code: string, message: string, text: string, offset: number): string {
  // The yaml package's words for a second `key: value` on the line of a key, said as a person would.
  if (/nested mappings are not allowed in compact mappings/i.test(message)) {
    return `"${lineAt(text, offset)}" holds a second "key: value" on one line (a colon followed by a space starts one); put quotes around a value that has ": " in it (run: "echo a: b"), or put the inner key on its own, indented line`;
  }
  if (code === 'MULTIPLE_DOCS') return 'the file holds more than one YAML document; svc.yml holds exactly one';
  if (code === 'TAG_RESOLVE_FAILED') return `${message.replace(/\.$/, '')}; svc.yml uses no YAML tags`;
  const said = message.replace(/ at line \d+, column \d+:?[\s\S]*$/, '');
  return said.charAt(0).toLowerCase() + said.slice(1);
}

/** Which node each alias stands for: the last node before it with that anchor, in document order. */
function aliasTargets(root: Node | null): Map<Alias, Node | undefined> {
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node | undefined>();
  const stack: unknown[] = root === null ? [] : [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isAlias(node)) {
      targets.set(node, anchors.get(node.source));
      continue;
    }
    if (!isMap(node) && !isSeq(node) && !isScalar(node)) continue;
    if (node.anchor !== undefined) anchors.set(node.anchor, node);
    if (isMap(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i].value, node.items[i].key);
    } else if (isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
    }
  }
  return targets;
}

class DocumentReader {
  readonly issues: Issue[] = [];
  private readonly path: Segment[] = [];
  private readonly converting = new Set<Node>();
  private readonly anchored = new Map<Node, { node: YamlNode; size: number }>();
  /** Nodes that aliases add by repeating what they refer to; bounded so that validation stays fast. */
  private expanded = 0;
  private readonly expansionLimit: number;
  private size = 0;
  private reportedDepth = false;

  constructor(
    private readonly text: string,
    private readonly targets: Map<Alias, Node | undefined>,
  ) {
    this.expansionLimit = 100_000 + text.length;
  }

  /** Converts `node`; `emptyOffset` is where an empty value is reported (its key, or its list dash). */
  node(node: unknown, emptyOffset: number, depth: number): YamlNode {
    if (depth > maxDepth) {
      if (!this.reportedDepth) this.issues.push({ code: 'too-deep', offset: rangeStart(node, emptyOffset), path: [...this.path], message: `values nest deeper than ${maxDepth} levels` });
      this.reportedDepth = true;
      this.size = 1;
      return scalarNode(null, emptyOffset);
    }
    if (isAlias(node)) return this.alias(node, depth);
    if (!isMap(node) && !isSeq(node) && !isScalar(node)) {
      this.size = 1;
      return scalarNode(null, emptyOffset);
    }
    const known = this.anchored.get(node);
    if (known !== undefined) {
      this.size = known.size;
      return known.node;
    }
    this.converting.add(node);
    const converted = isMap(node) ? this.map(node.items, node.range![0], depth) : isSeq(node) ? this.seq(node.items, node.range![0], depth) : this.scalar(node.value, node.range!, emptyOffset);
    this.converting.delete(node);
    if (node.anchor !== undefined) this.anchored.set(node, { node: converted, size: this.size });
    return converted;
  }

  private scalar(value: unknown, range: [number, number, number], emptyOffset: number): YamlNode {
    this.size = 1;
    const empty = value === null && range[0] === range[1];
    const plain = value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : String(value);
    return scalarNode(plain, empty ? emptyOffset : range[0]);
  }

  private alias(alias: Alias, depth: number): YamlNode {
    const offset = alias.range![0];
    const target = this.targets.get(alias);
    this.size = 1;
    if (target === undefined) return this.aliasIssue(offset, `alias *${alias.source} names no anchor defined before it`);
    if (this.converting.has(target)) return this.aliasIssue(offset, `alias *${alias.source} is inside the value it refers to`);
    const node = this.node(target, offset, depth);
    this.expanded += this.size;
    if (this.expanded > this.expansionLimit) {
      this.size = 1;
      return this.aliasIssue(offset, `aliases repeat more than ${this.expansionLimit} values; write the values out or use fewer aliases`);
    }
    return node;
  }

  private aliasIssue(offset: number, message: string): YamlNode {
    if (!this.issues.some((issue) => issue.code === 'yaml-alias' && issue.message === message)) this.issues.push({ code: 'yaml-alias', offset, path: [...this.path], message });
    return scalarNode(null, offset);
  }

  private seq(items: unknown[], offset: number, depth: number): YamlNode {
    const out: YamlNode[] = [];
    let size = 1;
    for (const item of items) {
      this.path.push(out.length);
      out.push(this.node(item, this.dashBefore(item, offset), depth + 1));
      size += this.size;
      this.path.pop();
    }
    this.size = size;
    return { kind: 'seq', items: out, offset };
  }

  /** The `-` of an empty list item, which the yaml package places after the dash. */
  private dashBefore(item: unknown, fallback: number): number {
    let at = rangeStart(item, fallback) - 1;
    while (at > 0 && this.text[at] === ' ') at--;
    return this.text[at] === '-' ? at : rangeStart(item, fallback);
  }

  private map(pairs: Pair[], offset: number, depth: number): YamlNode {
    const list = new EntryList();
    const merges: MapNode[] = [];
    let size = 1;
    for (const pair of pairs) {
      const keyOffset = rangeStart(pair.key, offset);
      const key = this.keyText(pair.key, keyOffset);
      if (key === undefined) continue;
      if (key === '<<' && isScalar(pair.key) && pair.key.type === 'PLAIN') {
        this.merge(pair.value, keyOffset, depth, merges);
        size += this.size;
        continue;
      }
      if (key.startsWith('x-')) continue;
      this.path.push(key);
      const value = this.node(pair.value, keyOffset, depth + 1);
      this.path.pop();
      size += this.size;
      if (list.add(key, keyOffset, value) !== undefined) this.issues.push(duplicateKeyIssue(this.path, key, keyOffset));
    }
    for (const source of merges) for (const entry of source.entries) if (!list.has(entry.key)) list.add(entry.key, entry.keyOffset, entry.value);
    this.size = size;
    return { kind: 'map', entries: list.entries, offset };
  }

  private keyText(key: unknown, offset: number): string | undefined {
    const node = isAlias(key) ? this.targets.get(key) : key;
    if (isScalar(node)) return typeof node.value === 'string' ? node.value : (node.source ?? String(node.value));
    const message = isMap(node) || isSeq(node) ? 'keys must be text, not a list or a map' : 'this key is empty';
    this.issues.push({ code: 'type', offset, path: [...this.path], message });
    return undefined;
  }

  /** `<<: *base` or `<<: [*a, *b]`: keys of the map win over merged ones, earlier sources over later ones. */
  private merge(value: unknown, offset: number, depth: number, merges: MapNode[]): void {
    const sources = isSeq(value) ? value.items : [value];
    let size = 0;
    for (const source of sources) {
      const known = this.issues.length;
      const node = this.node(source, offset, depth + 1);
      size += this.size;
      if (node.kind === 'map') merges.push(node);
      else if (this.issues.length === known) {
        this.issues.push({ code: 'type', offset: node.offset, path: [...this.path, '<<'], message: '<< (merge key) takes a map or a list of maps, such as <<: *defaults' });
      }
    }
    this.size = size;
  }
}

function rangeStart(node: unknown, fallback: number): number {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range ? range[0] : fallback;
}
