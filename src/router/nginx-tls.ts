// What the nginx data plane (nginx.ts) serves over TLS (`--tls-listen`): the custom domains' certificates and the
// installation's wildcard certificate, as files in its directory and as the servers of its configuration
// (tlsServers below; workspace servers take TLS when the wildcard covers workspace hosts).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { NamedCertificate, WildcardCertificate } from '../domains/wildcard.ts';
import { toSvc, type NginxSettings } from './nginx-config.ts';

export class NginxTls {
  private certificates = new Map<string, { certificate: string; key: string }>();

  constructor(
    /** The `listen` address as nginx writes it, and its port. */
    readonly listen: string,
    readonly port: number,
    private wildcard: WildcardCertificate | undefined,
    private readonly workspaceDomain: string,
  ) {}

  /** Takes the custom domains' certificates; whether they differ from those held (a reload is due). */
  setCertificates(certificates: NamedCertificate[]): boolean {
    const next = new Map(certificates.map((c) => [c.name, { certificate: c.certificate, key: c.key }]));
    const same = next.size === this.certificates.size && [...next].every(([name, c]) => this.certificates.get(name)?.certificate === c.certificate);
    this.certificates = next;
    return !same;
  }

  setWildcard(wildcard: WildcardCertificate): void {
    this.wildcard = wildcard;
  }

  private certificateFiles(dir: string, name: string) {
    return { name, certificate: path.join(dir, 'certs', `${name}.crt`), key: path.join(dir, 'certs', `${name}.key`) };
  }

  /** The wildcard certificate's files (a name no domain can have: labels hold no underscore). */
  private wildcardFiles(dir: string) {
    return { certificate: path.join(dir, 'certs', '_wildcard.crt'), key: path.join(dir, 'certs', '_wildcard.key') };
  }

  /** The TLS servers, and the TLS part of the workspace servers when the wildcard covers workspace hosts. */
  config(settings: NginxSettings): { servers: string; workspaces?: { listen: string; certificate: string; key: string } } {
    const wildcard = this.wildcard && { names: this.wildcard.names, ...this.wildcardFiles(settings.dir) };
    const servers = tlsServers(settings, this.listen, [...this.certificates.keys()].map((name) => this.certificateFiles(settings.dir, name)), wildcard);
    const coversWorkspaces = wildcard && this.wildcard!.covers(`w1.${this.workspaceDomain}`);
    return { servers, workspaces: coversWorkspaces ? { listen: this.listen, ...this.wildcardFiles(settings.dir) } : undefined };
  }

  /** Writes the certificates and keys (only nginx's master, which reads them as svc's user, may read them). */
  async writeFiles(dir: string): Promise<void> {
    if (this.certificates.size === 0 && !this.wildcard) return;
    await mkdir(path.join(dir, 'certs'), { recursive: true, mode: 0o700 });
    const pairs = [...this.certificates].map(([name, pems]) => ({ ...this.certificateFiles(dir, name), pems }));
    if (this.wildcard) pairs.push({ name: '_wildcard', ...this.wildcardFiles(dir), pems: this.wildcard });
    for (const { certificate, key, pems } of pairs) {
      await writeFile(certificate, pems.certificate, { mode: 0o600 });
      await writeFile(key, pems.key, { mode: 0o600 });
    }
  }
}

/** A custom domain's certificate as nginx reads it (files in the data plane's directory). */
export interface TlsCertificateFiles {
  name: string;
  certificate: string;
  key: string;
}

/** The installation's wildcard certificate as nginx reads it, and the names it serves by itself. */
export interface TlsWildcardFiles {
  names: string[];
  certificate: string;
  key: string;
}

/** A server on the TLS listener whose every request goes to svc, saying it came over TLS. */
function tlsServer(settings: NginxSettings, listen: string, names: string[], files: { certificate: string; key: string }): string {
  return `  server {
    listen ${listen} ssl;
    server_name ${names.join(' ')};
    ssl_certificate ${files.certificate};
    ssl_certificate_key ${files.key};
${toSvc(settings, `      proxy_set_header Host $http_host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $svc_connection;
      proxy_set_header X-Real-IP $remote_addr;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Host "";
      proxy_set_header X-Forwarded-Proto https;
`)}  }
`;
}

/**
 * The TLS listener (`--tls-listen`): a server per custom domain with its own certificate, chosen by SNI, and one for
 * the names of the installation's wildcard certificate (custom domains it covers, workspace hosts nginx does not
 * serve itself, the console when it is under it); their requests go to svc with `X-Forwarded-Proto: https` (svc's
 * router then does not redirect to HTTPS). A name the domain's own certificate serves is left out of the wildcard
 * server (nginx would refuse the same exact name twice; exact names win over wildcards anyway). A handshake for any
 * other name is refused. Certificates change by reload: the workers that hold connections finish them.
 */
export function tlsServers(settings: NginxSettings, listen: string, certificates: TlsCertificateFiles[], wildcard?: TlsWildcardFiles): string {
  let text = `  server {\n    listen ${listen} ssl default_server;\n    ssl_reject_handshake on;\n  }\n`;
  for (const certificate of certificates) text += tlsServer(settings, listen, [certificate.name], certificate);
  const own = new Set(certificates.map((c) => c.name));
  const names = wildcard?.names.filter((name) => !own.has(name)) ?? [];
  if (wildcard && names.length > 0) text += tlsServer(settings, listen, names, wildcard);
  return text;
}
