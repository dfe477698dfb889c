// Scalars of the block reader: quoted scalars on one line and the lines of literal and folded block scalars.
// They give up (throw giveUp) on anything the yaml package should read instead.

/** Thrown inside the block reader to give up; never leaves yaml-block.ts. */
export class GiveUp {}
export const giveUp = new GiveUp();

const SPACE = 32;

/** A quoted scalar starting at `p` that closes before `eol`. */
export function readQuotedScalar(src: string, p: number, eol: number): { value: string; end: number } {
  const quote = src[p];
  let value = '';
  let start = p + 1;
  let q = start;
  for (;;) {
    if (q >= eol) throw giveUp;
    const ch = src[q];
    if (ch === quote) {
      if (quote === "'" && src[q + 1] === "'") {
        value += src.slice(start, q + 1);
        start = q = q + 2;
        continue;
      }
      return { value: value + src.slice(start, q), end: q + 1 };
    }
    if (ch === '\\' && quote === '"') {
      value += src.slice(start, q);
      const escape = readEscape(src, q + 1, eol);
      value += escape.text;
      start = q = escape.end;
      continue;
    }
    q++;
  }
}

/** The content of a block scalar starting at `from`: its text without the final line break. */
export function readBlockLines(src: string, from: number, parentIndent: number, folded: boolean): { value: string; trailingEmpty: number; next: number } {
  let contentIndent = -1;
  let leadingSpaces = 0;
  let empty = 0;
  let value = '';
  let lines = 0;
  let at = from;
  while (at < src.length) {
    const newline = src.indexOf('\n', at);
    const end = newline === -1 ? src.length : newline;
    let spaces = 0;
    while (at + spaces < end && src.charCodeAt(at + spaces) === SPACE) spaces++;
    if (at + spaces === end) {
      if (end === src.length) break;
      if (contentIndent === -1) leadingSpaces = Math.max(leadingSpaces, spaces);
      else if (spaces > contentIndent) throw giveUp;
      empty++;
      at = end + 1;
      continue;
    }
    if (contentIndent === -1) {
      if (spaces <= parentIndent || leadingSpaces > spaces) throw giveUp;
      contentIndent = spaces;
    } else if (spaces < contentIndent) break;
    const text = src.slice(at + contentIndent, end);
    if (text.charCodeAt(0) === 9 || (folded && spaces > contentIndent)) throw giveUp;
    if (lines === 0) value = '\n'.repeat(empty) + text;
    else if (folded) value += (empty === 0 ? ' ' : '\n'.repeat(empty)) + text;
    else value += '\n'.repeat(empty + 1) + text;
    lines++;
    empty = 0;
    at = end === src.length ? end : end + 1;
  }
  if (contentIndent === -1) throw giveUp;
  return { value, trailingEmpty: empty, next: at };
}

const escapes: Record<string, string> = {
  '0': '\0', a: '\x07', b: '\b', e: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', N: '\u0085',
  _: '\u00a0', L: '\u2028', P: '\u2029', ' ': ' ', '"': '"', '/': '/', '\\': '\\',
};

function readEscape(src: string, p: number, eol: number): { text: string; end: number } {
  if (p >= eol) throw giveUp;
  const c = src[p];
  if (Object.hasOwn(escapes, c)) return { text: escapes[c], end: p + 1 };
  const length = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0;
  const hex = src.slice(p + 1, p + 1 + length);
  if (length === 0 || p + 1 + length > eol || !/^[0-9a-fA-F]+$/.test(hex)) throw giveUp;
  const code = parseInt(hex, 16);
  if (code > 0x10ffff) throw giveUp;
  return { text: String.fromCodePoint(code), end: p + 1 + length };
}
