// Certificates made with openssl for tests: a CA of their own and a leaf for some names signed by it (uploaded
// certificates, the installation's wildcard certificate). Debian's openssl, as pebble's set-up uses.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface MadeCertificate {
  /** The CA's certificate (PEM): what a client trusts. */
  ca: string;
  /** The leaf, then the CA (PEM). */
  certificate: string;
  key: string;
}

/** A CA and a certificate for `names` (DNS names, wildcards allowed) signed by it, in a new folder under `dir`. */
export async function madeCertificate(dir: string, names: string[], days = 10): Promise<MadeCertificate> {
  const folder = await mkdtemp(path.join(dir, 'cert-'));
  const file = (name: string) => path.join(folder, name);
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '30', '-subj', '/CN=test CA', '-keyout', file('ca.key'), '-out', file('ca.pem'),
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${names[0]}`, '-keyout', file('leaf.key'), '-out', file('leaf.csr')]);
  await writeFile(file('ext.cnf'), `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
  await run('openssl', ['x509', '-req', '-in', file('leaf.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', String(days), '-out', file('leaf.pem'), '-extfile', file('ext.cnf')]);
  const ca = await readFile(file('ca.pem'), 'utf8');
  return { ca, certificate: (await readFile(file('leaf.pem'), 'utf8')) + ca, key: await readFile(file('leaf.key'), 'utf8') };
}
