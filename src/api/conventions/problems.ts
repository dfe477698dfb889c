// Every error leaves the API as an RFC 9457 problem: thrown Problems, schema validation, Fastify's own
// errors (malformed JSON, content type, body size, unknown route) and unexpected exceptions alike.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Problem, problem, type ProblemFieldError } from '../../core/problems.ts';
import { SERVER_VERSION } from '../../core/version.ts';

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

const locations: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/** Ajv errors to problem errors: a JSON Pointer into the body (or the query, path, header), and a message. */
export function validationErrors(errors: AjvError[], context: string | undefined): ProblemFieldError[] {
  const where = locations[context ?? 'body'] ?? 'body';
  return errors
    .filter((e) => !['if', 'anyOf', 'oneOf'].includes(e.keyword))
    .map((e) => {
      let pointer = e.instancePath;
      if (e.keyword === 'required') pointer += `/${String(e.params.missingProperty)}`;
      if (e.keyword === 'additionalProperties') pointer += `/${String(e.params.additionalProperty)}`;
      const message =
        e.keyword === 'additionalProperties'
          ? 'is not a known field'
          : e.keyword === 'required'
            ? 'is required'
            : (e.message ?? 'is invalid');
      return { pointer: pointer || "/", message, in: where };
    });
}

function fromFastifyError(error: FastifyError & { validation?: AjvError[]; validationContext?: string }): Problem {
  if (error.validation) {
    const errors = validationErrors(error.validation, error.validationContext);
    const detail = errors.map((e) => `${e.pointer} ${e.message}`).join('; ');
    return problem('validation', 422, detail, { errors });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problem('unsupported-media-type', 415, 'Send the body as application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem('body-too-large', 413, 'The request body is larger than this server accepts.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problem('malformed-json', 400, 'The body is empty but its content type says JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problem('bad-request', 400, 'Content-Length does not match the body.');
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return problem('malformed-json', 400, `The body is not valid JSON: ${error.message}`);
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return problem('bad-request', error.statusCode, error.message);
  }
  return problem('internal', 500);
}

export function sendProblem(reply: FastifyReply, request: FastifyRequest, failure: Problem): FastifyReply {
  // Also for answers no route hook set it on (404s, refusals before the caller hook ran): app.ts, the listener.
  reply.header('svc-version', SERVER_VERSION);
  for (const [name, value] of Object.entries(failure.headers)) reply.header(name, value);
  return reply
    .code(failure.status)
    .type('application/problem+json')
    .send(failure.toBody(request.url.split('?')[0]));
}

/** Seconds a client waits before trying again while the database is not answering. */
const databaseRetrySeconds = 5;

export interface ProblemHandlingOptions {
  /**
   * Behind the nginx data plane: a body refused unread (413 and other parser errors) is read and dropped instead of
   * closing the connection, which nginx may still be writing it to (a reset there would turn the answer into nginx's 502).
   */
  keepConnections?: boolean;
  /** Where faults (500) are logged with their incident id (Fastify has no logger of its own). */
  logger?: FastifyBaseLogger;
  /** Whether an error says PostgreSQL is down or going away (store/availability.ts): 503, not a fault. */
  databaseUnavailable?: (error: unknown) => boolean;
}

export function registerProblemHandling(app: FastifyInstance, options: ProblemHandlingOptions = {}): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (options.keepConnections && error.code?.startsWith('FST_ERR_CTP_')) reply.removeHeader('connection');
    let failure = error instanceof Problem ? error : fromFastifyError(error);
    // A Problem thrown on purpose (503 wake-blocked, 501 not-available) is the answer; anything else is a fault,
    // but for the database being down (spec 7: a dependency is down), which the client may try again after.
    if (failure.status >= 500 && !(error instanceof Problem) && options.databaseUnavailable?.(error)) {
      options.logger?.warn({ err: error, method: request.method, url: request.url }, 'the database is not answering');
      failure = problem('unavailable', 503, 'The database is not answering now; try again in a few seconds.', {
        headers: { 'Retry-After': String(databaseRetrySeconds) },
      });
    } else if (failure.status >= 500 && !(error instanceof Problem)) {
      const incident = randomUUID();
      options.logger?.error({ err: error, incident, method: request.method, url: request.url }, 'request failed');
      failure = problem('internal', 500, `Something went wrong on our side; the incident id is ${incident}.`, {
        extra: { incident },
      });
    }
    return sendProblem(reply, request, failure);
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, request, problem('not-found', 404, `No route serves ${request.method} ${request.url.split('?')[0]}.`)),
  );
}
