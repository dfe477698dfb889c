import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random token of `bytes` bytes, base64url without padding. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** One-shot (crypto.hash): a fraction of the cost of a Hash object, on the hot path of every request with a key. */
export function sha256(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/** Compares two digests in constant time (lengths are public). */
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
