// Looks up the TXT record `_svc.<domain>` through the configured resolver (`--dns-resolver host:port`), or the
// system's resolvers when none is configured.
import { Resolver } from 'node:dns/promises';
import { txtRecordName } from './names.ts';
import type { Lookup } from './verification.ts';

const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN']);

export class TxtLookup {
  private readonly resolver: Resolver;

  /** `server`: `host:port` or `host` (port 53); undefined for the system's resolvers. */
  constructor(server: string | undefined) {
    this.resolver = new Resolver({ timeout: 3000, tries: 2 });
    if (server) this.resolver.setServers([server]);
  }

  async check(domain: string, token: string): Promise<Lookup> {
    const name = txtRecordName(domain);
    try {
      const values = (await this.resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
      if (values.includes(token)) return { kind: 'found' };
      return { kind: 'missing', detail: values.length > 0 ? `The TXT record ${name} does not hold this domain's token.` : `No TXT record ${name} was found.` };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (NO_RECORD.has(code)) return { kind: 'missing', detail: `No TXT record ${name} was found.` };
      return { kind: 'error', detail: `The DNS lookup of ${name} failed (${code || (error as Error).message}).` };
    }
  }
}
