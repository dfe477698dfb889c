// A certificate a team uploads for its domain (spec 3.6 "Uploaded"), checked with node:crypto before it is kept:
// PEM certificates (leaf first, then its chain), each signed by the next; the private key matches the leaf; the
// leaf names the domain; it is valid now. Pure: answers the problems' field errors or what to keep.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { ProblemFieldError } from '../core/problems.ts';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

export type UploadCheck = { ok: true; notAfter: Date } | { ok: false; errors: ProblemFieldError[] };

export function checkUploadedCertificate(name: string, certificatePem: string, keyPem: string, now: Date): UploadCheck {
  const checked = checkCertificateChain(certificatePem, keyPem, now);
  if (!checked.ok) return checked;
  const { leaf } = checked;
  if (leaf.checkHost(name) === undefined) return { ok: false, errors: [{ pointer: '/certificate', message: `does not name ${name} (subject alternative names: ${leaf.subjectAltName ?? 'none'})` }] };
  return { ok: true, notAfter: checked.notAfter };
}

export type ChainCheck = { ok: true; leaf: X509Certificate; notAfter: Date } | { ok: false; errors: ProblemFieldError[] };

/** PEM certificates (leaf first, each signed by the next), a key matching the leaf, every one valid at `now`. */
export function checkCertificateChain(certificatePem: string, keyPem: string, now: Date): ChainCheck {
  const fail = (pointer: string, message: string): ChainCheck => ({ ok: false, errors: [{ pointer, message }] });
  const blocks = certificatePem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) return fail('/certificate', 'must hold PEM certificates (-----BEGIN CERTIFICATE-----), the leaf first');
  let chain: X509Certificate[];
  try {
    chain = blocks.map((block) => new X509Certificate(block));
  } catch (error) {
    return fail('/certificate', `is not a readable certificate: ${(error as Error).message}`);
  }
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    return fail('/private_key', 'must be an unencrypted PEM private key');
  }
  const [leaf] = chain;
  if (!leaf.checkPrivateKey(key)) return fail('/private_key', 'does not match the certificate');
  for (const [index, certificate] of chain.entries()) {
    if (Date.parse(certificate.validFrom) > now.getTime()) return fail('/certificate', `certificate ${index + 1} is not valid before ${new Date(certificate.validFrom).toISOString()}`);
    if (Date.parse(certificate.validTo) <= now.getTime()) return fail('/certificate', `certificate ${index + 1} expired at ${new Date(certificate.validTo).toISOString()}`);
    const issuer = chain[index + 1];
    if (issuer && !(certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey))) {
      return fail('/certificate', `certificate ${index + 1} is not signed by certificate ${index + 2}: give the chain in order, leaf first`);
    }
  }
  return { ok: true, leaf, notAfter: new Date(leaf.validTo) };
}
