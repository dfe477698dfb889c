// Token buckets per caller (user, or address for requests without credentials): `perMinute` requests a
// minute with bursts up to the same number. Over the limit: 429 with Retry-After.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import { problem } from '../../core/problems.ts';

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    private readonly perMinute: number,
    private readonly clock: Clock,
  ) {
    this.perMs = perMinute / 60_000;
  }

  /** Takes one token; returns 0 when allowed, else the seconds to wait. */
  take(caller: string): number {
    const now = this.clock.now().getTime();
    const bucket = this.buckets.get(caller) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    this.buckets.set(caller, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000));
  }

  /** Forgets full buckets so the map does not grow with every address ever seen. */
  sweep(): void {
    const now = this.clock.now().getTime();
    for (const [caller, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.perMinute) this.buckets.delete(caller);
    }
  }
}

export function registerRateLimit(app: FastifyInstance, perMinute: number, clock: Clock): void {
  if (perMinute === 0) return;
  const limiter = new RateLimiter(perMinute, clock);
  const sweeper = setInterval(() => limiter.sweep(), 60_000).unref();
  app.addHook('onClose', async () => clearInterval(sweeper));
  // Runs after authentication, so that a signed-in caller is limited as a user wherever they connect from.
  app.addHook('onRequest', async (request, reply) => {
    const caller = request.principal ? `user:${request.principal.user.id}` : `address:${request.ip}`;
    const wait = limiter.take(caller);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      throw problem('rate-limited', 429, `Too many requests; wait ${wait} s.`, { headers: { 'retry-after': String(wait) } });
    }
  });
}
