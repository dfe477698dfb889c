import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random token of `bytes` bytes, base64url without padding. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares two digests in constant time (lengths are public). */
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
