// `${{ ... }}` templates of svc.yml: reading one text into literal parts and references. A reference names one
// value: workspace.id, workspace.devDomain, team.id, env.K, secrets.K, or services.<name>.host, .port, .dsn,
// .secret, .details.<field> of a managed service of the file. `$${{` writes a literal `${{`.
import { isEnvName, isSecretName, isServiceName } from './names.ts';

export type TemplateReference =
  | { root: 'workspace'; field: 'id' | 'devDomain' }
  | { root: 'team'; field: 'id' }
  | { root: 'env'; name: string }
  | { root: 'secrets'; name: string }
  | { root: 'services'; service: string; field: 'host' | 'port' | 'dsn' | 'secret' }
  | { root: 'services'; service: string; field: 'details'; detail: string };

export interface TemplateExpression {
  reference: TemplateReference;
  /** The template as written, `${{ ... }}` included. */
  source: string;
  /** Where it starts in the text. */
  index: number;
}

export type TemplatePart = string | TemplateExpression;

export interface TemplateError {
  code: 'template-syntax' | 'template-unknown';
  message: string;
  index: number;
}

export interface ParsedTemplate {
  parts: TemplatePart[];
  error?: TemplateError;
}

export const templateRoots = ['workspace', 'team', 'env', 'secrets', 'services'] as const;

const segmentPattern = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const serviceFields = ['host', 'port', 'dsn', 'secret', 'details'];

/** Whether a text holds anything that looks like a template. */
export const hasTemplate = (text: string): boolean => text.includes('${{');

/** Reads a text into literal parts and template expressions; stops at the first error. */
export function parseTemplate(text: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  let literal = '';
  let at = 0;
  for (;;) {
    const start = text.indexOf('${{', at);
    if (start === -1) break;
    if (start > 0 && text[start - 1] === '$') {
      literal += text.slice(at, start - 1) + '${{';
      at = start + 3;
      continue;
    }
    literal += text.slice(at, start);
    const end = text.indexOf('}}', start + 3);
    if (end === -1) return { parts, error: { code: 'template-syntax', index: start, message: 'a template ${{ is not closed with }}' } };
    const source = text.slice(start, end + 2);
    const reference = readReference(text.slice(start + 3, end).trim());
    if ('code' in reference) return { parts, error: { ...reference, index: start } };
    if (literal !== '') parts.push(literal);
    literal = '';
    parts.push({ reference, source, index: start });
    at = end + 2;
  }
  literal += text.slice(at);
  if (literal !== '') parts.push(literal);
  return { parts };
}

function readReference(expression: string): TemplateReference | Omit<TemplateError, 'index'> {
  const shown = `\${{ ${expression} }}`;
  if (expression === '') return syntax('a template is empty; name a value, such as ${{ secrets.DB_PASSWORD }}');
  const segments = expression.split('.');
  if (!segments.every((segment) => segmentPattern.test(segment))) {
    return syntax(`${shown} is not a template svc can read; a template names one value with dotted names, such as \${{ secrets.DB_PASSWORD }}`);
  }
  const [root, first] = segments;
  const count = segments.length;
  switch (root) {
    case 'workspace':
      return count === 2 && (first === 'id' || first === 'devDomain') ? { root, field: first } : unknown(`${shown} names nothing; workspace has id and devDomain`);
    case 'team':
      return count === 2 && first === 'id' ? { root, field: first } : unknown(`${shown} names nothing; team has id`);
    case 'env':
    case 'secrets': {
      if (count !== 2) return unknown(`${shown} names nothing; write ${root}.NAME`);
      const valid = root === 'env' ? isEnvName(first) : isSecretName(first);
      if (!valid) return syntax(`${shown}: ${first} is not a valid ${root === 'env' ? 'variable' : 'secret'} name (letters, digits and _, not starting with a digit)`);
      return { root, name: first };
    }
    case 'services':
      return serviceReference(shown, segments.slice(1));
    default:
      return unknown(`${shown} starts with ${root}, which svc does not know; templates start with workspace, team, env, secrets or services`);
  }
}

function serviceReference(shown: string, rest: string[]): TemplateReference | Omit<TemplateError, 'index'> {
  const [service = '', field, detail] = rest;
  if (!isServiceName(service)) return unknown(`${shown} names no service; write services.<name>.host, .port, .dsn, .secret or .details.<field>`);
  if (field === undefined || !serviceFields.includes(field)) return unknown(`${shown} names nothing; a managed service has host, port, dsn, secret and details.<field>`);
  if (field === 'details') {
    return rest.length === 3 && detail !== undefined ? { root: 'services', service, field, detail } : unknown(`${shown} names nothing; write services.${service}.details.<field>`);
  }
  if (rest.length !== 2) return unknown(`${shown} names nothing; services.${service}.${field} has no fields`);
  return { root: 'services', service, field: field as 'host' | 'port' | 'dsn' | 'secret' };
}

const syntax = (message: string): Omit<TemplateError, 'index'> => ({ code: 'template-syntax', message });
const unknown = (message: string): Omit<TemplateError, 'index'> => ({ code: 'template-unknown', message });

/** The reference as written in a template, without the braces: "services.db.dsn". */
export function referenceName(reference: TemplateReference): string {
  switch (reference.root) {
    case 'env':
    case 'secrets':
      return `${reference.root}.${reference.name}`;
    case 'services':
      return `services.${reference.service}.${reference.field}${reference.field === 'details' ? `.${reference.detail}` : ''}`;
    default:
      return `${reference.root}.${reference.field}`;
  }
}
