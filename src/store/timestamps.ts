// timestamptz columns as Date, read without pg's general date parser (postgres-date: three regular expressions and
// a Date built twice per value), which cost more than the rest of a row when a page of workspaces is read. The
// text PostgreSQL sends in the usual shape, `YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM]`, is read by position; anything
// else (BC, infinity, years before 100 or after 9999, an offset with seconds) goes to the general parser, and the
// result is the same Date as postgres-date's in every case (src/store/timestamps.test.ts).
import pg from 'pg';

/** pg's own parser (postgres-date), taken before database.ts installs parseTimestamptz in its place. */
export const parseGeneral: (text: string) => Date | number | null = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text');

function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    value = value * 10 + d;
  }
  return value;
}

export function parseTimestamptz(text: string): Date | number | null {
  const n = text.length;
  if (n < 22 || text[4] !== '-' || text[7] !== '-' || text[10] !== ' ' || text[13] !== ':' || text[16] !== ':') return parseGeneral(text);
  // the fraction runs from 19 to the offset's sign
  let signAt = 19;
  if (text[19] === '.') {
    signAt = 20;
    while (signAt < n && text.charCodeAt(signAt) >= 48 && text.charCodeAt(signAt) <= 57) signAt++;
  }
  const sign = text[signAt];
  const offsetLength = n - signAt;
  if ((sign !== '+' && sign !== '-') || (offsetLength !== 3 && !(offsetLength === 6 && text[signAt + 3] === ':'))) return parseGeneral(text);
  const year = digits(text, 0, 4);
  const offsetMinutes = digits(text, signAt + 1, signAt + 3) * 60 + (offsetLength === 6 ? digits(text, signAt + 4, signAt + 6) : 0);
  const fields = [year, digits(text, 5, 7), digits(text, 8, 10), digits(text, 11, 13), digits(text, 14, 16), digits(text, 17, 19), offsetMinutes];
  if (year < 100 || fields.some(Number.isNaN)) return parseGeneral(text);
  // as postgres-date computes it: milliseconds from parseFloat of the fraction (Date.UTC truncates them)
  const ms = signAt > 20 ? 1000 * parseFloat(text.slice(19, signAt)) : 0;
  const utc = Date.UTC(year, fields[1] - 1, fields[2], fields[3], fields[4], fields[5], ms);
  return new Date(utc - (sign === '+' ? 1 : -1) * offsetMinutes * 60_000);
}
