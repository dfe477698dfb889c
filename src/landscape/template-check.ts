// Static checks of templates in a landscape file: where templates may appear, that they can be read, and that
// what they name exists (services.<name> must be a managed service of the same file).
import type { Issue, Segment } from './codes.ts';
import { describePath } from './messages.ts';
import type { ServiceEntry } from './needs.ts';
import { hasTemplate, parseTemplate, referenceName, type TemplateReference } from './templates.ts';
import { stringOf, valueOf, type TemplatedScalar, type YamlNode } from './yaml-tree.ts';

/** What templates a place accepts: all of them, those of managed config, or none. */
type Place = 'all' | 'config' | 'none' | 'secret';

function placeOf(path: readonly Segment[]): Place {
  if (path[0] !== 'services' || path.length < 3) return 'none';
  const key = path[2];
  if (key === 'env' && path.length === 4) return 'all';
  if (key === 'target' && path.length === 3) return 'all';
  if (key === 'config' && path.length >= 4) return 'config';
  if (key === 'secrets' && path.length === 4) return 'secret';
  return 'none';
}

export function checkTemplates(root: YamlNode, services: readonly ServiceEntry[], issues: Issue[], templated?: readonly TemplatedScalar[]): void {
  const types = new Map(services.map((service) => [service.name, stringOf(valueOf(service.node, 'type'))]));
  if (templated === undefined) visit(root, [], types, issues);
  else for (const { node, path } of templated) checkText(node.value as string, node.offset, path, types, issues);
}

function visit(node: YamlNode, path: Segment[], types: Map<string, string | undefined>, issues: Issue[]): void {
  if (node.kind === 'map') {
    const entries = node.entries;
    for (let i = 0; i < entries.length; i++) {
      path.push(entries[i].key);
      visit(entries[i].value, path, types, issues);
      path.pop();
    }
  } else if (node.kind === 'seq') {
    const items = node.items;
    for (let i = 0; i < items.length; i++) {
      path.push(i);
      visit(items[i], path, types, issues);
      path.pop();
    }
  } else if (typeof node.value === 'string' && hasTemplate(node.value)) {
    checkText(node.value, node.offset, [...path], types, issues);
  }
}

function checkText(text: string, offset: number, path: Segment[], types: Map<string, string | undefined>, issues: Issue[]): void {
  const place = placeOf(path);
  if (place === 'secret') return; // The schema checks the exact ${{ secrets.K }} form.
  if (place === 'none') {
    const message = `${describePath(path)} holds a \${{ ... }} template, but templates are filled in only in env values, forward targets and managed config; use shell variables such as $NAME in steps`;
    issues.push({ code: 'template-not-allowed', offset, path, message });
    return;
  }
  const parsed = parseTemplate(text);
  if (parsed.error !== undefined) {
    issues.push({ code: parsed.error.code, offset, path, message: `${describePath(path)}: ${parsed.error.message}` });
    return;
  }
  for (const part of parsed.parts) {
    if (typeof part === 'string') continue;
    const problem = referenceProblem(part.reference, place, types);
    if (problem !== undefined) issues.push({ ...problem, offset, path, message: `${describePath(path)} uses \${{ ${referenceName(part.reference)} }}, but ${problem.message}` });
  }
}

/** Why a reference cannot be used at a place of the file, or undefined. */
function referenceProblem(reference: TemplateReference, place: Place, types: Map<string, string | undefined>): Pick<Issue, 'code' | 'message'> | undefined {
  if (place === 'config' && (reference.root === 'secrets' || reference.root === 'services')) {
    const advice = reference.root === 'secrets' ? 'put provider secrets under secrets' : 'config cannot depend on other services';
    return { code: 'template-not-allowed', message: `managed config may use only workspace, team and env templates; ${advice}` };
  }
  if (reference.root !== 'services') return undefined;
  const type = types.get(reference.service);
  if (type === 'managed') return undefined;
  const why = type === undefined ? `the file has no service ${reference.service}` : `${reference.service} is a ${type} service; only managed services have host, port, dsn, secret and details`;
  return { code: 'template-unknown', message: why };
}
