// TLS on the node data plane (`--data-plane node --tls-listen`): node's own TLS server, choosing the certificate by
// SNI as nginx does (src/domains/wildcard.ts: a custom domain's own certificate, else the installation's wildcard
// certificate when it covers the name; no handshake for other names). Its requests and upgrades go to the same
// handler as the plain listener's (console, API, router by Host). New certificates apply to the next handshake;
// connections that are open keep theirs, so nothing is dropped.
import type http from 'node:http';
import https from 'node:https';
import tls, { type SecureContext } from 'node:tls';
import type { Socket } from 'node:net';
import { MAX_HEADER_BYTES } from '../api/conventions/request-errors.ts';
import { certificateFor, type NamedCertificate, type WildcardCertificate } from '../domains/wildcard.ts';

export class NodeTlsListener {
  private server?: https.Server;
  private own = new Map<string, SecureContext>();
  private pems = new Map<string, string>();
  private wildcardContext?: SecureContext;
  private boundPort?: number;

  constructor(
    private wildcard: WildcardCertificate | undefined,
    private readonly log: (m: string) => void,
  ) {
    this.wildcardContext = wildcard && tls.createSecureContext({ cert: wildcard.certificate, key: wildcard.key });
  }

  /** The port it listens on, once started. */
  get tlsPort(): number | undefined {
    return this.boundPort;
  }

  /** A renewed wildcard certificate: the next handshake for a name it covers uses it. */
  async wildcardChanged(wildcard: WildcardCertificate): Promise<void> {
    this.wildcardContext = tls.createSecureContext({ cert: wildcard.certificate, key: wildcard.key });
    this.wildcard = wildcard;
  }

  /** The custom domains' certificates: the next handshake for a name uses its new one. */
  async certificatesChanged(certificates: NamedCertificate[]): Promise<void> {
    const own = new Map<string, SecureContext>();
    const pems = new Map<string, string>();
    for (const c of certificates) {
      try {
        own.set(c.name, this.pems.get(c.name) === c.certificate ? this.own.get(c.name)! : tls.createSecureContext({ cert: c.certificate, key: c.key }));
        pems.set(c.name, c.certificate);
      } catch (error) {
        this.log(`data plane: the certificate of ${c.name} cannot be served: ${(error as Error).message}`);
      }
    }
    this.own = own;
    this.pems = pems;
  }

  /** Listens on host:port (0: a free port), handing requests and upgrades to `plain`'s listeners. */
  async start(host: string, port: number, plain: http.Server): Promise<number> {
    const server = https.createServer({
      maxHeaderSize: MAX_HEADER_BYTES,
      SNICallback: (name, done) => {
        const context = certificateFor(name, this.own, this.wildcard, this.wildcardContext);
        if (context) done(null, context);
        else done(new Error(`no certificate for ${name}`));
      },
    });
    server.keepAliveTimeout = plain.keepAliveTimeout;
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => plain.emit('request', request, response));
    server.on('upgrade', (request: http.IncomingMessage, socket: Socket, head: Buffer) => plain.emit('upgrade', request, socket, head));
    server.on('clientError', (error: Error, socket: Socket) => plain.emit('clientError', error, socket));
    // A handshake refused (an unknown name, no SNI) ends that connection only.
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const address = server.address();
    this.boundPort = typeof address === 'object' && address ? address.port : port;
    return this.boundPort;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
