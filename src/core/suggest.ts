// Which known name a misspelt one probably meant ("did you mean"), and lists of names in words: for the landscape
// file's errors, the API's "no such service" and the CLI's workspace and team names alike.

/** The candidate closest to `word` when it is probably a typo of it (case aside, a swap of two letters is one edit). */
export function closestName(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  for (const candidate of candidates) {
    if (candidate === word) return candidate;
    if (Math.abs(candidate.length - word.length) > bestDistance) continue;
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance <= bestDistance && (best === undefined || distance < editDistance(word.toLowerCase(), best.toLowerCase()))) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Edits (insert, delete, replace, swap of neighbours) from `a` to `b`; long words only compare equal or not. */
export function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return a === b ? 0 : Infinity;
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j], rows[i - 2][j - 2] + 1);
    }
    rows.push(row);
  }
  return rows[a.length][b.length];
}

/** "a, b or c". */
export function listWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

/** ` Did you mean "web"?` when a candidate is close to `word`, else nothing. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const close = closestName(word, candidates);
  return close === undefined || close === word ? '' : ` Did you mean "${close}"?`;
}

/** `"a", "b" and "c"` (at most `limit` of them, then "and N more"). */
export function quotedList(names: readonly string[], limit = 20): string {
  const shown = names.slice(0, limit).map((name) => `"${name}"`);
  if (names.length > limit) return `${shown.join(', ')} and ${names.length - limit} more`;
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}
