import net from 'node:net';

/** A loopback port free right now (the embedded PostgreSQL, pods without a network of their own). */
export function freeLoopbackPort(): Promise<number> {
  return freePortOn('127.0.0.1');
}

/** A port free right now on `host` (the nginx data plane's listener when svc is told port 0). */
export function freePortOn(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether a peer address is this machine's loopback (IPv4, IPv6 or IPv4-mapped). */
export const isLoopbackAddress = (address: string): boolean => address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
