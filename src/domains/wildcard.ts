// The installation's wildcard certificate (`--tls-wildcard-cert`, `--tls-wildcard-key`; spec 3.6 "Covered"): read
// and checked at start like an uploaded certificate (key match, chain order, valid now), then it serves HTTPS for
// every name it covers: the workspace hosts when it is for `*.<workspace domain>`, and custom domains under a parent
// domain it names, whose certificate state is then Covered (no ACME order). Which certificate a TLS server name
// gets (exact first, then the wildcard) is decided here for both data planes.
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { checkCertificateChain } from './uploaded-certificate.ts';

export interface WildcardCertificate {
  /** PEM: the leaf, then its chain. */
  certificate: string;
  key: string;
  /** The DNS names of the leaf (`*.example.com`, maybe `example.com`), lower case. */
  names: string[];
  notAfter: Date;
  /** Whether a TLS client checking host `name` accepts this certificate (RFC 6125: `*` is one whole left label). */
  covers(name: string): boolean;
}

/** The DNS names of a certificate's subject alternative names, lower case. */
export function dnsNames(certificate: X509Certificate): string[] {
  return (certificate.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
}

/** Reads and checks the operator's files; throws saying what is wrong (svc then does not start). */
export async function loadWildcardCertificate(certificateFile: string, keyFile: string, now: Date): Promise<WildcardCertificate> {
  const read = (file: string, what: string) => readFile(file, 'utf8').catch((error: Error) => {
    throw new Error(`--tls-wildcard-${what}: cannot read ${file}: ${error.message}`);
  });
  const certificate = await read(certificateFile, 'cert');
  const key = await read(keyFile, 'key');
  const checked = checkCertificateChain(certificate, key, now);
  if (!checked.ok) throw new Error(`the wildcard certificate (${certificateFile}, ${keyFile}) cannot serve: ${checked.errors.map((e) => `${e.pointer === '/private_key' ? 'the key' : 'the certificate'} ${e.message}`).join('; ')}`);
  const leaf = checked.leaf;
  const names = dnsNames(leaf);
  if (names.length === 0) throw new Error(`the wildcard certificate ${certificateFile} names no DNS name (subject alternative names)`);
  return { certificate, key, names, notAfter: checked.notAfter, covers: (name) => leaf.checkHost(name, { subject: 'never' }) !== undefined };
}

/** A data plane that serves the wildcard certificate (nginx reloads, node swaps its context). */
export interface WildcardTarget {
  wildcardChanged(wildcard: WildcardCertificate): Promise<void>;
}

/**
 * The operator's files, read again every `intervalMs` (and when asked): a renewed wildcard certificate reaches the
 * data plane without a restart of svc; one that does not check out is logged and the one served stays.
 */
export class WildcardFiles {
  private timer?: NodeJS.Timeout;
  /** The check under way or the last one: each check runs after the one before (they never reject). */
  private running: Promise<boolean> = Promise.resolve(false);

  constructor(
    private current: WildcardCertificate,
    private readonly deps: { certificateFile: string; keyFile: string; now: () => Date; onChange: (next: WildcardCertificate) => Promise<void>; log: (m: string) => void; intervalMs?: number },
  ) {}

  get certificate(): WildcardCertificate {
    return this.current;
  }

  start(): void {
    this.timer = setInterval(() => void this.checkNow(), this.deps.intervalMs ?? 60_000);
    this.timer.unref();
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    return this.running.then(() => undefined);
  }

  /** Reads the files now (after a read under way); resolves once a changed certificate is served (true) or nothing changed (false). */
  checkNow(): Promise<boolean> {
    this.running = this.running.then(() => this.readAndServe());
    return this.running;
  }

  private async readAndServe(): Promise<boolean> {
    try {
      const [certificate, key] = await Promise.all([readFile(this.deps.certificateFile, 'utf8'), readFile(this.deps.keyFile, 'utf8')]);
      if (certificate === this.current.certificate && key === this.current.key) return false;
      const next = await loadWildcardCertificate(this.deps.certificateFile, this.deps.keyFile, this.deps.now());
      this.current = next;
      await this.deps.onChange(next);
      this.deps.log(`tls: the wildcard certificate for ${next.names.join(', ')} (valid until ${next.notAfter.toISOString()}) is served now`);
      return true;
    } catch (error) {
      this.deps.log(`tls: the wildcard certificate was not replaced: ${(error as Error).message}`);
      return false;
    }
  }
}

/** A certificate the data plane serves for a name. */
export interface NamedCertificate {
  name: string;
  certificate: string;
  key: string;
}

/** Which certificate a TLS server name gets: the domain's own when it has one, else the wildcard when it covers it. */
export function certificateFor<T>(name: string, own: ReadonlyMap<string, T>, wildcard: { covers(name: string): boolean } | undefined, wildcardValue: T | undefined): T | undefined {
  const host = name.toLowerCase().replace(/\.$/, '');
  const exact = own.get(host);
  if (exact !== undefined) return exact;
  return wildcard?.covers(host) ? wildcardValue : undefined;
}
