// Checks of the shapes the specification gives (2.1 conventions, 2.4 operations, 2.5 problems), shared by rules.
import { check, described } from './suite.ts';
import { mediaType, type Exchange } from './http.ts';

const dateTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isDateTime = (value: unknown) => typeof value === 'string' && dateTime.test(value) && !Number.isNaN(Date.parse(value));
export const isUuid = (value: unknown) => typeof value === 'string' && uuid.test(value);
export const isId = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 1;

/** What is wrong with an error answer as a problem (spec 2.5, 7), or undefined when it is one. */
export function problemFault(exchange: Exchange): string | undefined {
  const where = `${exchange.method} /api/v1${exchange.path} (${exchange.status})`;
  if (mediaType(exchange.headers) !== 'application/problem+json') return `${where} has content type "${mediaType(exchange.headers) || 'none'}", not application/problem+json`;
  const body = exchange.body;
  if (!body || typeof body !== 'object') return `${where} has no JSON problem body`;
  if (typeof body.type !== 'string' || !(body.type === 'about:blank' || /^urn:svc:problem:[a-z0-9][a-z0-9-]*$/.test(body.type))) {
    return `${where} has type ${JSON.stringify(body.type)}, neither about:blank nor urn:svc:problem:<name>`;
  }
  if (typeof body.title !== 'string') return `${where} has no title`;
  if (body.status !== undefined && body.status !== exchange.status) return `${where} says status ${body.status} in its body`;
  return undefined;
}

/** The answer is a problem with this status (and this type, when given). */
export function expectProblem(exchange: Exchange, statuses: number | number[], type?: string): void {
  const wanted = Array.isArray(statuses) ? statuses : [statuses];
  check(wanted.includes(exchange.status), `${described(exchange)}, not ${wanted.join(' or ')}`);
  const fault = problemFault(exchange);
  check(!fault, fault!);
  if (type) check(exchange.body.type === `urn:svc:problem:${type}`, `${described(exchange)}, not the type urn:svc:problem:${type}`);
}

/** What is wrong with an operation (spec 2.4), or undefined. */
export function operationFault(operation: any, kind?: string): string | undefined {
  if (!operation || typeof operation !== 'object') return 'the body is not an operation';
  if (!isUuid(operation.id)) return `operation id ${JSON.stringify(operation.id)} is not a uuid`;
  if (kind && operation.kind !== kind) return `operation kind is ${JSON.stringify(operation.kind)}, not ${kind}`;
  if (!['pending', 'running', 'succeeded', 'failed'].includes(operation.state)) return `operation state ${JSON.stringify(operation.state)} is not one of pending, running, succeeded, failed`;
  if (!isDateTime(operation.created_at) || !isDateTime(operation.updated_at)) return 'operation created_at or updated_at is not a date-time';
  if (operation.target !== undefined && !/^\/workspaces\/\d+$|^\//.test(operation.target)) return `operation target ${JSON.stringify(operation.target)} is not an API path`;
  return undefined;
}

/** A long-running action's answer (spec 4.1): 202, the operation in the body, its address in Location. */
export function expectAccepted(exchange: Exchange, kind: string): any {
  check(exchange.status === 202, `${described(exchange)}, not 202`);
  const fault = operationFault(exchange.body, kind);
  check(!fault, `${described(exchange)}: ${fault}`);
  const location = exchange.headers.get('location') ?? '';
  check(location.endsWith(`/operations/${exchange.body.id}`), `Location is "${location}", not the operation's address (…/operations/${exchange.body.id})`);
  return exchange.body;
}
