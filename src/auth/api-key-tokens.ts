// API key tokens: svc_<uuid id>_<secret>. Only the SHA-256 of the secret is stored.
import { randomUUID } from 'node:crypto';
import { randomToken, sha256 } from '../core/secrets.ts';

const tokenPattern = /^svc_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface MintedSecret {
  secret: string;
  secretHash: Buffer;
}

export function newApiKeyId(): string {
  return randomUUID();
}

export function mintApiKeySecret(): MintedSecret {
  const secret = randomToken(32);
  return { secret, secretHash: sha256(secret) };
}

export function apiKeyPrefix(id: string): string {
  return `svc_${id}_`;
}

export function formatApiKeyToken(id: string, secret: string): string {
  return `${apiKeyPrefix(id)}${secret}`;
}

export function parseApiKeyToken(token: string): { id: string; secretHash: Buffer } | undefined {
  const match = tokenPattern.exec(token);
  return match ? { id: match[1], secretHash: sha256(match[2]) } : undefined;
}
