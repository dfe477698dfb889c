// Reading a landscape file: YAML with positions, the JSON Schema, then the rules beyond it. Never throws on
// any input; every error carries a code, a JSON Pointer, a line and a column.
import { problem, type Problem } from '../core/problems.ts';
import type { Issue, LandscapeError } from './codes.ts';
import { locateIssues, readYaml } from './parse.ts';
import { svcSchema } from './schema.ts';
import { checkSemantics } from './semantics.ts';
import { defaultLandscapeDefaults, type Landscape, type LandscapeDefaults } from './types.ts';
import { compileSchema } from './validate.ts';
import { plainValue, type YamlNode } from './yaml-tree.ts';

export interface ParseLandscapeOptions {
  /** Installation defaults (service plans, idle timeout); `defaultLandscapeDefaults` when absent. */
  defaults?: LandscapeDefaults;
  /** Most errors returned; the rest are counted in `omitted`. Default 100. */
  maxErrors?: number;
}

export interface ParseLandscapeResult {
  /** The landscape as written (x- keys and anchors resolved away), present when the file has no error. */
  landscape?: Landscape;
  /** Sorted by place in the file. */
  errors: LandscapeError[];
  /** Errors beyond `maxErrors` that are not listed. */
  omitted: number;
}

let validateTree: ((node: YamlNode) => Issue[]) | undefined;

/** Reads and checks the text of a landscape file (svc.yml or svc.<profile>.yml). */
export function parseLandscape(text: string, options: ParseLandscapeOptions = {}): ParseLandscapeResult {
  const defaults = options.defaults ?? defaultLandscapeDefaults;
  const read = readYaml(text);
  const issues = read.issues;
  // A document that cannot be read as a whole (syntax, aliases, depth) is not checked further: the rest
  // would only repeat those errors in other words.
  const unreadable = issues.some((issue) => issue.code === 'yaml-syntax' || issue.code === 'yaml-alias' || issue.code === 'too-deep');
  if (!unreadable && read.root === null) {
    issues.push({ code: 'type', offset: 0, path: [], message: 'the file is empty; a landscape file is a map that starts with schema: svc/v1' });
  }
  if (!unreadable && read.root !== null) {
    validateTree ??= compileSchema(svcSchema);
    // A loop, not push(...list): a spread of tens of thousands of issues overflows the stack.
    for (const list of [validateTree(read.root), checkSemantics(read.root, defaults, read.templated)]) for (const issue of list) issues.push(issue);
  }
  const { errors, omitted } = locateIssues(text, issues, options.maxErrors ?? 100);
  if (errors.length > 0 || read.root === null) return { errors, omitted };
  return { landscape: plainValue(read.root) as Landscape, errors, omitted };
}

/**
 * The problem for a refused file: 422, type urn:svc:problem:invalid-landscape, with the errors listed (at most
 * `maxErrors` of parseLandscape) and `omitted`, the number of errors beyond them.
 */
export function landscapeProblem(errors: LandscapeError[], options: { file?: string; omitted?: number } = {}): Problem {
  const omitted = options.omitted ?? 0;
  const total = errors.length + omitted;
  const file = options.file ?? 'svc.yml';
  const more = omitted > 0 ? `; the first ${errors.length} are listed, ${omitted} more are not` : '';
  const first = errors[0];
  const detail =
    total === 1 && first !== undefined
      ? `${file} has an error at line ${first.line}, column ${first.column}: ${first.message}`
      : `${file} has ${total} errors${more}.`;
  return problem('invalid-landscape', 422, detail, { errors, extra: { omitted } });
}
