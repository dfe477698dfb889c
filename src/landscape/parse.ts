// Reading the YAML of a landscape file into a tree with positions, and turning issues into located errors.
import type { Issue, LandscapeError } from './codes.ts';
import { subjectOf } from './messages.ts';
import { readBlockYaml } from './yaml-block.ts';
import { readYamlDocument } from './yaml-document.ts';
import { jsonPointer, LineIndex, type TemplatedScalar, type YamlNode } from './yaml-tree.ts';

export interface YamlReadResult {
  /** The document, or null for an empty file or one with YAML syntax errors. */
  root: YamlNode | null;
  issues: Issue[];
  /** Which reader read it: the fast block-style reader, or the yaml package. */
  reader: 'block' | 'yaml';
  /** Every text value holding `${{`, with its path; only from the block reader (the other has aliases). */
  templated?: TemplatedScalar[];
}

/** Reads YAML text; never throws. */
export function readYaml(text: string): YamlReadResult {
  // YAML allows no NUL in a stream (the yaml package reads one anyway), and PostgreSQL keeps no NUL in text.
  const nul = text.indexOf('\u0000');
  if (nul >= 0) {
    const message = 'the text holds a NUL character (U+0000), which YAML does not allow';
    return { root: null, issues: [{ code: 'yaml-syntax', offset: nul, path: [], message }], reader: 'yaml' };
  }
  const block = readBlockYaml(text);
  if (block !== undefined) return { ...block, reader: 'block' };
  return { ...readYamlDocument(text), reader: 'yaml' };
}

/** Located errors, sorted by place, duplicates removed, at most `maxErrors`; `omitted` counts the rest. */
export function locateIssues(text: string, issues: Issue[], maxErrors: number): { errors: LandscapeError[]; omitted: number } {
  if (issues.length === 0) return { errors: [], omitted: 0 };
  const seen = new Set<string>();
  const unique: Issue[] = [];
  for (const issue of [...issues].sort((a, b) => a.offset - b.offset)) {
    const identity = `${issue.code}\u0000${issue.offset}\u0000${issue.message}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    unique.push(issue);
  }
  // Only the listed errors get a line, column and pointer: a crafted file may have hundreds of thousands.
  const lines = new LineIndex(text);
  const errors = unique.slice(0, Math.max(0, maxErrors)).map((issue): LandscapeError => {
    const { line, column } = lines.position(issue.offset);
    return { pointer: jsonPointer(issue.path), message: issue.message, line, column, code: issue.code, subject: issue.subject ?? subjectOf(issue.path) };
  });
  return { errors, omitted: unique.length - errors.length };
}
