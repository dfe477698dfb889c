// A fast reader for the block-style YAML that landscape files are written in: block maps and lists, one-line
// plain and quoted scalars, literal and folded block scalars, one-line flow lists and maps, comments.
// It gives up (returns undefined) on anything else (anchors, tags, multi-line flow or plain scalars, tabs,
// several documents, odd indentation, syntax errors) and parse.ts then reads the text with the yaml package,
// which also words every syntax error. Both give the same tree: yaml.test.ts and property.test.ts compare them
// on a corpus and on thousands of random texts. It exists for speed: the yaml package takes about a second
// for 1 MB on the build machine.
import type { Issue, Segment } from './codes.ts';
import { duplicateKeyIssue, EntryList, maxDepth, scalarNode, type ScalarValue, type TemplatedScalar, type YamlNode } from './yaml-tree.ts';
import { giveUp, readBlockLines, readQuotedScalar } from './yaml-block-scalars.ts';
import { readPlainScalar } from './yaml-scalars.ts';
import { isExtensionKey } from './names.ts';

// Characters the yaml package treats specially or rejects; any of them sends the text to the full reader.
const unusualCharacters = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u0084\u0086-\u009f\r\ufeff\ufffe\uffff\u2028\u2029]/;

const SPACE = 32;
const NEWLINE = 10;
const HASH = 35;
const DASH = 45;
const COLON = 58;

/** Reads `text` when it only uses the common block style; undefined when it does not. */
export function readBlockYaml(text: string): { root: YamlNode | null; issues: Issue[]; templated: TemplatedScalar[] } | undefined {
  if (unusualCharacters.test(text)) return undefined;
  const reader = new BlockReader(text);
  try {
    return { root: reader.readDocument(), issues: reader.issues, templated: reader.templated };
  } catch (error) {
    if (error === giveUp) return undefined;
    throw error;
  }
}

class BlockReader {
  readonly issues: Issue[] = [];
  readonly templated: TemplatedScalar[] = [];
  private readonly path: Segment[] = [];
  private readonly length: number;
  /** The current content line: where its content starts, its indentation and its end. */
  private content = 0;
  private indent = 0;
  private eol = 0;
  private atEnd = false;
  private nextTab = -2;
  private depth = 0;
  /** The key readKey found last: its text, where it starts, and the offset just after its colon. */
  private key = '';
  private keyOffset = 0;
  private keyAfter = 0;
  /** Whether the document has started: from then on a document marker gives up. */
  private started = false;

  constructor(private readonly src: string) {
    this.length = src.length;
  }

  readDocument(): YamlNode | null {
    this.seekContent(0);
    if (!this.atEnd && this.indent === 0 && this.isMarker(this.content, '---')) {
      const after = this.skipSpaces(this.content + 3);
      if (after < this.eol && (this.src.charCodeAt(after) !== HASH || after === this.content + 3)) throw giveUp;
      this.started = true;
      this.nextLine();
      // An explicit but empty document: the yaml package gives it an empty value, not no document.
      if (this.atEnd) throw giveUp;
    }
    this.started = true;
    if (!this.atEnd && this.indent === 0 && this.isMarker(this.content, '---')) throw giveUp;
    if (this.atEnd) return null;
    if (this.indent !== 0) throw giveUp;
    const root = this.readBlockNode();
    if (!this.atEnd) throw giveUp;
    return root;
  }

  /** Moves to the first line at or after `from` that is neither blank nor a comment. */
  private seekContent(from: number): void {
    const src = this.src;
    let p = from;
    while (p < this.length) {
      let q = p;
      while (q < this.length && src.charCodeAt(q) === SPACE) q++;
      const c = q < this.length ? src.charCodeAt(q) : -1;
      if (c === -1) break;
      if (c === NEWLINE) {
        p = q + 1;
        continue;
      }
      const end = src.indexOf('\n', q);
      const eol = end === -1 ? this.length : end;
      if (c === HASH) {
        p = eol + 1;
        continue;
      }
      if (this.tabBefore(eol, p)) throw giveUp;
      // Document markers (--- and ...) past the start mean several documents or an end: the yaml package's job.
      if (q === p && this.started && (this.isMarker(q, '---') || this.isMarker(q, '...'))) throw giveUp;
      if (q === p && !this.started && this.isMarker(q, '...')) throw giveUp;
      this.content = q;
      this.indent = q - p;
      this.eol = eol;
      this.atEnd = false;
      return;
    }
    if (this.tabBefore(this.length, p)) throw giveUp;
    this.atEnd = true;
    this.indent = -1;
    this.content = this.eol = this.length;
  }

  /** Whether a tab lies in [from, end); remembers the next tab so that the whole text is scanned once. */
  private tabBefore(end: number, from: number): boolean {
    if (this.nextTab !== -1 && this.nextTab < from) this.nextTab = this.src.indexOf('\t', from);
    return this.nextTab !== -1 && this.nextTab < end;
  }

  /** Adds a map entry; an x- or duplicate key drops the value, and the templates collected inside it. */
  private addEntry(list: EntryList, key: string, offset: number, value: YamlNode, mark: number): void {
    if (isExtensionKey(key)) this.templated.length = mark;
    else if (list.add(key, offset, value) !== undefined) {
      this.templated.length = mark;
      this.issues.push(duplicateKeyIssue(this.path, key, offset));
    }
  }

  /** A scalar value; one that holds a template is remembered with its path for the template checks. */
  private scalar(value: ScalarValue, offset: number): YamlNode {
    const node = scalarNode(value, offset);
    if (typeof value === 'string' && value.includes('${{')) this.templated.push({ node, path: [...this.path] });
    return node;
  }

  private isMarker(p: number, marker: string): boolean {
    if (!this.src.startsWith(marker, p)) return false;
    const next = this.src.charCodeAt(p + 3);
    return Number.isNaN(next) || next === SPACE || next === NEWLINE || next === 9;
  }

  private nextLine(): void {
    this.seekContent(this.eol + 1);
  }

  private skipSpaces(p: number): number {
    while (p < this.eol && this.src.charCodeAt(p) === SPACE) p++;
    return p;
  }

  private isDash(p: number): boolean {
    return this.src.charCodeAt(p) === DASH && (p + 1 >= this.eol || this.src.charCodeAt(p + 1) === SPACE);
  }

  /** Nothing but spaces and a comment may follow a value on its line. */
  private endOfValue(p: number): void {
    const q = this.skipSpaces(p);
    if (q < this.eol && (this.src.charCodeAt(q) !== HASH || q === p)) throw giveUp;
    this.nextLine();
  }

  private enter(): void {
    if (++this.depth > maxDepth) throw giveUp;
  }

  private readBlockNode(): YamlNode {
    if (this.isDash(this.content)) return this.readSeq(this.indent, this.content);
    if (!this.readKey(this.content)) throw giveUp;
    return this.readMap(this.indent, this.content);
  }

  /** A block map whose first key readKey has just read. */
  private readMap(indent: number, offset: number): YamlNode {
    this.enter();
    const list = new EntryList();
    for (;;) {
      const key = this.key;
      const keyOffset = this.keyOffset;
      const mark = this.templated.length;
      this.path.push(key);
      const value = this.readValue(this.keyAfter, indent, keyOffset, true);
      this.path.pop();
      this.addEntry(list, key, keyOffset, value, mark);
      if (this.atEnd || this.indent < indent) break;
      if (this.indent > indent) throw giveUp;
      if (!this.readKey(this.content)) throw giveUp;
    }
    this.depth--;
    return { kind: 'map', entries: list.entries, offset };
  }

  private readSeq(indent: number, offset: number): YamlNode {
    this.enter();
    const items: YamlNode[] = [];
    let dash = offset;
    for (;;) {
      this.path.push(items.length);
      items.push(this.readItem(dash, indent));
      this.path.pop();
      if (this.atEnd || this.indent < indent) break;
      if (this.indent > indent) throw giveUp;
      if (!this.isDash(this.content)) break;
      dash = this.content;
    }
    this.depth--;
    return { kind: 'seq', items, offset };
  }

  private readItem(dash: number, indent: number): YamlNode {
    const p = this.skipSpaces(dash + 1);
    if (p >= this.eol || this.src.charCodeAt(p) === HASH) {
      this.nextLine();
      return this.readNested(indent, dash, false);
    }
    if (this.isDash(p)) throw giveUp;
    if (this.readKey(p)) return this.readMap(p - (this.content - this.indent), p);
    return this.readValue(p, indent, dash, false);
  }

  /** A value on the lines after a key or dash that had nothing after it. */
  private readNested(parentIndent: number, emptyOffset: number, inMap: boolean): YamlNode {
    if (this.atEnd) return scalarNode(null, emptyOffset);
    if (this.indent > parentIndent) return this.readBlockNode();
    if (inMap && this.indent === parentIndent && this.isDash(this.content)) return this.readSeq(this.indent, this.content);
    return scalarNode(null, emptyOffset);
  }

  /** The value after `key:` or `- ` on the same line (or on the next lines when none). */
  private readValue(from: number, parentIndent: number, emptyOffset: number, inMap: boolean): YamlNode {
    const src = this.src;
    const p = this.skipSpaces(from);
    if (p >= this.eol || src.charCodeAt(p) === HASH) {
      this.nextLine();
      return this.readNested(parentIndent, emptyOffset, inMap);
    }
    const c = src[p];
    if (c === '|' || c === '>') return this.readBlockScalar(p, parentIndent);
    if (c === '"' || c === "'") {
      const quoted = this.readQuoted(p);
      this.endOfValue(quoted.end);
      return this.scalar(quoted.value, p);
    }
    if (c === '[' || c === '{') return this.readFlow(p);
    if (!this.isPlainStart(p, false)) throw giveUp;
    let end = p;
    while (end < this.eol) {
      const ch = src.charCodeAt(end);
      if (ch === HASH && src.charCodeAt(end - 1) === SPACE) break;
      if (ch === COLON && (end + 1 >= this.eol || src.charCodeAt(end + 1) === SPACE)) throw giveUp;
      end++;
    }
    while (src.charCodeAt(end - 1) === SPACE) end--;
    const value = readPlainScalar(src.slice(p, end));
    this.nextLine();
    return this.scalar(value, p);
  }

  private isPlainStart(p: number, inFlow: boolean): boolean {
    const c = this.src[p];
    if ('-?:'.includes(c)) {
      const next = p + 1 < this.eol ? this.src[p + 1] : ' ';
      return next !== ' ' && !(inFlow && ',[]{}'.includes(next));
    }
    return !',[]{}#&*!|>\'"%@`'.includes(c);
  }

  /** Reads a `key:` at `p` on the current line into key, keyOffset and keyAfter; false when there is none. */
  private readKey(p: number): boolean {
    const src = this.src;
    const c = src[p];
    if (c === '"' || c === "'") {
      const quoted = this.readQuoted(p);
      if (src.charCodeAt(quoted.end) !== COLON) return false;
      if (quoted.end + 1 < this.eol && src.charCodeAt(quoted.end + 1) !== SPACE) throw giveUp;
      return this.foundKey(quoted.value, p, quoted.end + 1);
    }
    if (!this.isPlainStart(p, false)) return false;
    let q = p;
    let flowIndicator = false;
    for (; q < this.eol; q++) {
      const ch = src.charCodeAt(q);
      if (ch === COLON && (q + 1 >= this.eol || src.charCodeAt(q + 1) === SPACE)) break;
      if (ch === HASH && src.charCodeAt(q - 1) === SPACE) return false;
      // [ ] { } , in a plain key: legal YAML, but rare enough to leave to the full reader.
      if (ch === 91 || ch === 93 || ch === 123 || ch === 125 || ch === 44) flowIndicator = true;
    }
    if (q >= this.eol) return false;
    if (flowIndicator || q - p > 1000 || src.charCodeAt(q - 1) === SPACE) throw giveUp;
    const text = src.slice(p, q);
    if (text === '<<') throw giveUp;
    const value = readPlainScalar(text);
    return this.foundKey(typeof value === 'string' ? value : text, p, q + 1);
  }

  private foundKey(key: string, offset: number, after: number): true {
    this.key = key;
    this.keyOffset = offset;
    this.keyAfter = after;
    return true;
  }

  /** A quoted scalar that closes on its line. */
  private readQuoted(p: number): { value: string; end: number } {
    return readQuotedScalar(this.src, p, this.eol);
  }

  /** A flow collection (`[...]` or `{...}`, nesting allowed) that closes on its line. */
  private readFlow(p: number): YamlNode {
    const flow = this.readFlowCollection(p);
    this.endOfValue(flow.end);
    return flow.node;
  }

  private readFlowCollection(p: number): { node: YamlNode; end: number } {
    this.enter();
    const src = this.src;
    const isMap = src[p] === '{';
    const close = isMap ? '}' : ']';
    const list = new EntryList();
    const items: YamlNode[] = [];
    let q = this.skipSpaces(p + 1);
    while (q >= this.eol || src[q] !== close) {
      if (isMap) {
        const key = this.readFlowScalar(q, true);
        if (src.charCodeAt(key.end) !== COLON || src.charCodeAt(key.end + 1) !== SPACE) throw giveUp;
        const name = typeof key.value === 'string' ? key.value : src.slice(q, key.end);
        const mark = this.templated.length;
        this.path.push(name);
        const value = this.readFlowValue(this.skipSpaces(key.end + 1));
        this.path.pop();
        this.addEntry(list, name, q, value.node, mark);
        q = this.skipSpaces(value.end);
      } else {
        this.path.push(items.length);
        const item = this.readFlowValue(q);
        this.path.pop();
        items.push(item.node);
        q = this.skipSpaces(item.end);
      }
      if (src[q] === ',' && q < this.eol) q = this.skipSpaces(q + 1);
      else if (src[q] !== close || q >= this.eol) throw giveUp;
    }
    this.depth--;
    const node: YamlNode = isMap ? { kind: 'map', entries: list.entries, offset: p } : { kind: 'seq', items, offset: p };
    return { node, end: q + 1 };
  }

  private readFlowValue(p: number): { node: YamlNode; end: number } {
    const c = this.src[p];
    if ((c === '[' || c === '{') && p < this.eol) return this.readFlowCollection(p);
    const scalar = this.readFlowScalar(p, false);
    return { node: this.scalar(scalar.value, p), end: scalar.end };
  }

  /** A scalar inside a one-line flow collection; `asKey` stops at the `: ` of a map entry. */
  private readFlowScalar(p: number, asKey: boolean): { value: ScalarValue; end: number } {
    const src = this.src;
    if (p >= this.eol) throw giveUp;
    const c = src[p];
    if (c === '"' || c === "'") return this.readQuoted(p);
    if (!this.isPlainStart(p, true)) throw giveUp;
    let q = p;
    for (; q < this.eol; q++) {
      const ch = src[q];
      if (ch === ',' || ch === ']' || ch === '}') break;
      if (ch === '[' || ch === '{' || (ch === '#' && src[q - 1] === ' ')) throw giveUp;
      if (ch === ':') {
        const next = q + 1 < this.eol ? src[q + 1] : ' ';
        if (next === ' ' || ',[]{}'.includes(next)) {
          if (!asKey) throw giveUp;
          break;
        }
      }
    }
    if (q >= this.eol) throw giveUp;
    let end = q;
    while (src.charCodeAt(end - 1) === SPACE) end--;
    return { value: readPlainScalar(src.slice(p, end)), end: q };
  }

  /** `|` or `>` with optional chomping; content lines follow, indented deeper than the parent. */
  private readBlockScalar(p: number, parentIndent: number): YamlNode {
    const src = this.src;
    const folded = src[p] === '>';
    let q = p + 1;
    const chomp = src[q] === '-' || src[q] === '+' ? src[q++] : '';
    const rest = this.skipSpaces(q);
    if (rest < this.eol && (src.charCodeAt(rest) !== HASH || rest === q)) throw giveUp;
    const lines = readBlockLines(src, this.eol + 1, parentIndent, folded);
    let value = lines.value;
    if (chomp !== '-') value += '\n';
    if (chomp === '+') value += '\n'.repeat(lines.trailingEmpty);
    this.seekContent(lines.next);
    if (!this.atEnd && this.indent > parentIndent) throw giveUp;
    return this.scalar(value, p);
  }
}
