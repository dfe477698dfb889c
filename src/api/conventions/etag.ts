// ETag on changeable resources; changes and deletes send it back in If-Match (412 on mismatch, 428 missing).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { problem } from '../../core/problems.ts';

export function etagOf(version: number): string {
  return `"v${version}"`;
}

export function setEtag(reply: FastifyReply, version: number): void {
  reply.header('etag', etagOf(version));
}

/** Checks If-Match against the current version; returns that version for a guarded UPDATE ... WHERE version = $n. */
export function requireIfMatch(request: FastifyRequest, currentVersion: number): number {
  const header = request.headers['if-match'];
  if (header === undefined || header === '') {
    throw problem('precondition-required', 428, 'Send the ETag you last read in If-Match.');
  }
  const tags = header.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (!tags.includes('*') && !tags.includes(etagOf(currentVersion))) {
    throw preconditionFailed();
  }
  return currentVersion;
}

export const preconditionFailed = () =>
  problem('precondition-failed', 412, 'The resource changed since you read it; read it again and retry.');
