// Token buckets per caller (user, or address for requests without credentials): `perMinute` requests a
// minute with bursts up to the same number. Over the limit: 429 with Retry-After.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import { problem } from '../../core/problems.ts';

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  /** Users by their numeric id, callers without credentials by their address. */
  private readonly buckets = new Map<string | number, Bucket>();
  private readonly perMs: number;

  constructor(
    private readonly perMinute: number,
    private readonly clock: Clock,
  ) {
    this.perMs = perMinute / 60_000;
  }

  /** Takes one token; returns 0 when allowed, else the seconds to wait. */
  take(caller: string | number): number {
    const now = this.clock.nowMs();
    let bucket = this.buckets.get(caller);
    if (bucket === undefined) {
      bucket = { tokens: this.perMinute, at: now };
      this.buckets.set(caller, bucket);
    }
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000));
  }

  /** Forgets full buckets so the map does not grow with every address ever seen. */
  sweep(): void {
    const now = this.clock.nowMs();
    for (const [caller, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.perMinute) this.buckets.delete(caller);
    }
  }
}

/** What the rate limit asks of a request: undefined to let it pass, else the 429 to answer. */
export type RateCheck = (request: FastifyRequest) => Error | undefined;

/**
 * The installation's limit for one app (none for 0): the per-request check runs in the caller hook
 * (conventions/authentication.ts), after authentication, so that a signed-in caller is limited as a user wherever
 * they connect from; callers without credentials by their address.
 */
export function rateLimitOf(app: FastifyInstance, perMinute: number, clock: Clock): RateCheck | undefined {
  if (perMinute === 0) return undefined;
  const limiter = new RateLimiter(perMinute, clock);
  const sweeper = setInterval(() => limiter.sweep(), 60_000).unref();
  app.addHook('onClose', async () => clearInterval(sweeper));
  return (request) => {
    const wait = limiter.take(request.principal ? request.principal.user.id : request.ip);
    if (wait === 0) return undefined;
    return problem('rate-limited', 429, `Too many requests; wait ${wait} s.`, { headers: { 'retry-after': String(wait) } });
  };
}
