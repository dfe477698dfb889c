// Debian's pebble, the ACME test CA, on loopback (docs: /work/shared/notes/recipes.md "ACME (HTTP-01) against
// Debian's pebble"): its own HTTPS certificate made with openssl (Debian ships none), HTTP-01 validation against
// `httpPort` on 127.0.0.1 (names resolved through the test's DNS server). Its root is new at every start.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freeLoopbackPort } from '../../src/core/loopback.ts';
import { until } from './wait.ts';

const run = promisify(execFile);

export interface TestPebble {
  directoryUrl: string;
  /** The CA of pebble's own HTTPS (for --acme-ca-file). */
  caFile: string;
  /** Starts pebble validating HTTP-01 on 127.0.0.1:httpPort through the DNS server `dns`. */
  start(httpPort: number, dns: string): Promise<void>;
  /** The root that signs what pebble issues (PEM). */
  root(): Promise<string>;
  stop(): Promise<void>;
}

function fetchText(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    https.get(url, { ca, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (c: string) => (body += c));
      response.on('end', () => (response.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${response.statusCode}`))));
    }).on('error', reject);
  });
}

export async function preparePebble(): Promise<TestPebble> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-pebble-'));
  const file = (name: string) => path.join(dir, name);
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '30', '-subj', '/CN=pebble test CA', '-keyout', file('ca.key'), '-out', file('ca.pem'),
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', file('key.pem'), '-out', file('wfe.csr')]);
  await writeFile(file('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  await run('openssl', ['x509', '-req', '-in', file('wfe.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '30', '-out', file('cert.pem'), '-extfile', file('ext.cnf')]);
  const [apiPort, managementPort, tlsPort] = [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()];
  const ca = () => import('node:fs/promises').then((fs) => fs.readFile(file('ca.pem'), 'utf8'));
  let child: ChildProcess | undefined;
  return {
    directoryUrl: `https://127.0.0.1:${apiPort}/dir`,
    caFile: file('ca.pem'),
    async start(httpPort, dns) {
      await writeFile(file('pebble.json'), JSON.stringify({ pebble: {
        listenAddress: `127.0.0.1:${apiPort}`, managementListenAddress: `127.0.0.1:${managementPort}`, certificate: file('cert.pem'), privateKey: file('key.pem'),
        httpPort, tlsPort, ocspResponderURL: '', externalAccountBindingRequired: false } }));
      child = spawn('pebble', ['-config', file('pebble.json'), '-dnsserver', dns], { env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' }, stdio: 'ignore' });
      const pem = await ca();
      await until(() => fetchText(`https://127.0.0.1:${apiPort}/dir`, pem).then(() => true), 'pebble to answer', 15_000);
    },
    async root() {
      return fetchText(`https://127.0.0.1:${managementPort}/roots/0`, await ca());
    },
    async stop() {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child!.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
