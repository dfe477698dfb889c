// Where a `forward` route's request goes: its target resolved under the SSRF rules (ssrf.ts), the address pinned.
import { Refusal } from './refusal.ts';
import type { Upstream } from './proxy.ts';
import { pinnedLookup, resolveForwardTarget, type AllowList } from './ssrf.ts';

export async function forwardUpstream(target: string, requestTarget: string, allow: AllowList): Promise<Upstream> {
  const resolved = await resolveForwardTarget(target, { allow });
  if (!resolved.ok) throw new Refusal(resolved.kind === 'forbidden' ? 'forwardForbidden' : 'forwardUnreachable', resolved.reason);
  const base = resolved.url.pathname.replace(/\/$/, '');
  if (resolved.url.protocol !== 'http:') throw new Refusal('forwardUnreachable', 'The router forwards to http:// targets only in this release.');
  return {
    host: resolved.url.hostname,
    port: Number(resolved.url.port || 80),
    path: `${base}${requestTarget}`,
    lookup: pinnedLookup(resolved.address, resolved.family),
  };
}
