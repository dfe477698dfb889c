// Idempotency-Key on POST (rules 1 to 6 of 4.1), kept in PostgreSQL per user for 24 hours.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addRouteHook, routeMethods } from './route-hooks.ts';
import { createHash } from 'node:crypto';
import { DAY, MINUTE, type Clock } from '../../core/clock.ts';
import { problem } from '../../core/problems.ts';
import { digestsEqual } from '../../core/secrets.ts';
import type { Queryable } from '../../store/database.ts';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../../store/idempotency.ts';

export const IDEMPOTENT_BODY_LIMIT = 1024 * 1024;
/** A run that neither finished nor failed within this time (its server died) frees its key. */
const ABANDONED_MS = 10 * MINUTE;
const keptHeaders = ['content-type', 'location', 'etag'];

interface HeldKey {
  userId: number;
  key: string;
}

const held = new WeakMap<FastifyRequest, HeldKey>();

function bodySize(request: FastifyRequest): number {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > 0) return declared;
  return request.body === undefined ? 0 : Buffer.byteLength(JSON.stringify(request.body));
}

function requestKey(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined || request.method !== 'POST' || !request.principal) return undefined;
  const key = Array.isArray(value) ? value[0] : value;
  if (key.length < 1 || key.length > 255) {
    throw problem('validation', 422, 'Idempotency-Key must be 1 to 255 characters.', {
      errors: [{ pointer: '/idempotency-key', message: 'must be 1 to 255 characters', in: 'header' }],
    });
  }
  return key;
}

function replay(reply: FastifyReply, status: number, headers: Record<string, string>, body: string): FastifyReply {
  return reply.code(status).headers(headers).header('idempotent-replayed', 'true').send(body);
}

export function registerIdempotency(app: FastifyInstance, pool: Queryable, clock: Clock): void {
  // Before parsing: a body above 1 MiB with a key is refused without reading it into a record.
  const hooks: Array<[Parameters<typeof addRouteHook>[1], unknown]> = [];
  hooks.push(['preValidation', async (request: FastifyRequest) => {
    if (requestKey(request) !== undefined && bodySize(request) > IDEMPOTENT_BODY_LIMIT) {
      throw problem('idempotency-body-too-large', 413, 'A request with an Idempotency-Key may carry at most 1 MiB.');
    }
  }]);

  hooks.push(['preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const key = requestKey(request);
    if (key === undefined) return;
    const userId = request.principal!.user.id;
    const path = request.url.split('?')[0];
    const bodyHash = createHash('sha256').update(JSON.stringify(request.body ?? null)).digest();
    const now = clock.now();
    const existing = await claimIdempotencyKey(pool, {
      userId,
      key,
      method: request.method,
      path,
      bodyHash,
      at: now,
      expiresAt: new Date(now.getTime() + DAY),
      abandonedBefore: new Date(now.getTime() - ABANDONED_MS),
    });
    if (existing === undefined) {
      held.set(request, { userId, key });
      return;
    }
    if (existing.method !== request.method || existing.path !== path || !digestsEqual(existing.body_hash, bodyHash)) {
      throw problem('idempotency-key-reused', 422, 'This Idempotency-Key was used for another request; use a new key.');
    }
    if (existing.state === 'running') {
      throw problem('idempotency-in-flight', 409, 'The first request with this Idempotency-Key is still running.', {
        headers: { 'retry-after': '1' },
      });
    }
    return replay(reply, existing.status!, existing.response_headers ?? {}, existing.response_body ?? '');
  }]);

  hooks.push(['onSend', async (request: FastifyRequest, reply: FastifyReply, payload: string | Buffer | null) => {
    const claim = held.get(request);
    if (!claim) return payload;
    held.delete(request);
    if (reply.statusCode >= 400 || (payload !== null && typeof payload !== 'string' && !Buffer.isBuffer(payload))) {
      await releaseIdempotencyKey(pool, claim.userId, claim.key);
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const name of keptHeaders) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    await completeIdempotencyKey(pool, {
      ...claim,
      status: reply.statusCode,
      headers,
      body: payload === null ? '' : payload.toString(),
    });
    return payload;
  }]);

  // A request that ended without passing onSend (a hook failed after the claim) must not keep its key busy.
  // A client that hangs up does not release it: the first run goes on and a retry must not run beside it.
  hooks.push(['onResponse', async (request: FastifyRequest) => {
    const claim = held.get(request);
    if (claim) await releaseIdempotencyKey(pool, claim.userId, claim.key);
  }]);

  app.addHook('onRoute', (route) => {
    if (!routeMethods(route).includes('POST') || route.config?.access === 'public' || route.config?.access === 'optional') return;
    for (const [name, hook] of hooks) addRouteHook(route, name, hook);
  });
}
