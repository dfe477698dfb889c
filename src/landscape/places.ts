// Lines and columns for errors found after the file was read, when templates are filled in at Plan and Sync:
// those errors know their JSON Pointer into the file, and the file's YAML tree knows where that value is written.
import { Problem, type ProblemFieldError, type ProblemName } from '../core/problems.ts';
import { readYaml } from './parse.ts';
import { LineIndex, type YamlNode } from './yaml-tree.ts';

/** The errors with `line` and `column` of the value each pointer names (or of the nearest enclosing one found). */
export function placeErrors(text: string, errors: readonly ProblemFieldError[]): ProblemFieldError[] {
  const { root } = readYaml(text);
  const lines = new LineIndex(text);
  return errors.map((error) => {
    const { line, column } = lines.position(root === null ? 0 : offsetOf(root, error.pointer));
    return { ...error, line, column };
  });
}

/** At most this many errors are listed, as for the file's own errors (parseLandscape's maxErrors). */
const listedErrors = 100;

/** The same problem, its errors placed in `text`; beyond the first 100 the detail counts the rest. */
export function placeProblem(problem: Problem, text: string): Problem {
  const errors = problem.errors ?? [];
  if (errors.length === 0) return problem;
  const name = problem.type.replace(/^urn:svc:problem:/, '') as ProblemName;
  const more = errors.length > listedErrors ? ` The first ${listedErrors} of ${errors.length} places are listed.` : '';
  const detail = `${problem.detail ?? problem.title}${more}`;
  return new Problem(name, problem.status, detail, { errors: placeErrors(text, errors.slice(0, listedErrors)), headers: problem.headers, extra: problem.extra, title: problem.title });
}

function offsetOf(root: YamlNode, pointer: string): number {
  let node = root;
  let offset = root.offset;
  for (const segment of pointer.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    const next = childOf(node, segment);
    if (next === undefined) break;
    node = next.node;
    offset = next.offset;
  }
  return offset;
}

function childOf(node: YamlNode, segment: string): { node: YamlNode; offset: number } | undefined {
  if (node.kind === 'map') {
    const entry = node.entries.find((e) => e.key === segment);
    // An empty value has no place of its own: its key's place is where the reader looks.
    return entry && { node: entry.value, offset: entry.value.kind === 'scalar' && entry.value.value === null ? entry.keyOffset : entry.value.offset };
  }
  if (node.kind === 'seq' && /^(0|[1-9]\d*)$/.test(segment)) {
    const item = node.items[Number(segment)];
    return item && { node: item, offset: item.offset };
  }
  return undefined;
}
