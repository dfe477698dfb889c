// How YAML 1.2 (core schema, as the yaml package applies it) reads a plain scalar: null, true/false, numbers,
// or text. The block reader uses it; the yaml package does the same for the texts the block reader gives up on.
import type { ScalarValue } from './yaml-tree.ts';

const nullWords = /^(?:~|[Nn]ull|NULL)$/;
const booleans = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const octal = /^0o[0-7]+$/;
const decimal = /^[-+]?[0-9]+$/;
const hexadecimal = /^0x[0-9a-fA-F]+$/;
const special = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const exponent = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const fraction = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

export function readPlainScalar(text: string): ScalarValue {
  const c = text.charCodeAt(0);
  // Most texts start with a letter that no special value starts with.
  const mayBeSpecial = c === 126 || c === 43 || c === 45 || c === 46 || (c >= 48 && c <= 57) || 'nNtTfF'.includes(text[0]);
  if (!mayBeSpecial) return text;
  if (nullWords.test(text)) return null;
  if (booleans.test(text)) return text[0] === 't' || text[0] === 'T';
  if (octal.test(text)) return parseInt(text.slice(2), 8);
  if (decimal.test(text)) return parseInt(text, 10);
  if (hexadecimal.test(text)) return parseInt(text.slice(2), 16);
  if (special.test(text)) {
    if (text.endsWith('nan') || text.endsWith('NaN') || text.endsWith('NAN')) return NaN;
    return text[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (exponent.test(text) || fraction.test(text)) return parseFloat(text);
  return text;
}
