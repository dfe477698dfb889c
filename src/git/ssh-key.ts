// The SSH key pair svc makes for a user (ed25519), in the formats OpenSSH reads: the public key line pasted at a
// git host, and the private key file ssh loads. Pure: the key is made by node's crypto, nothing is written here.
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';

export interface SshKeyPair {
  /** PKCS#8 PEM: what is sealed in the database. */
  privatePem: string;
  /** `ssh-ed25519 AAAA… comment` */
  publicKey: string;
  /** `SHA256:…` as `ssh-keygen -l` prints it. */
  fingerprint: string;
}

const KEY_TYPE = 'ssh-ed25519';

function sshString(data: Buffer | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function rawKeys(privatePem: string): { seed: Buffer; publicBytes: Buffer } {
  const jwk = createPrivateKey(privatePem).export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || !jwk.d || !jwk.x) throw new Error('not an ed25519 key');
  return { seed: Buffer.from(jwk.d, 'base64url'), publicBytes: Buffer.from(jwk.x, 'base64url') };
}

/** The public key as the SSH wire format names it (the blob an agent lists and a server checks). */
export function publicKeyBlob(privatePem: string): Buffer {
  return Buffer.concat([sshString(KEY_TYPE), sshString(rawKeys(privatePem).publicBytes)]);
}

export function describeKey(privatePem: string, comment: string): SshKeyPair {
  const blob = publicKeyBlob(privatePem);
  return {
    privatePem,
    publicKey: `${KEY_TYPE} ${blob.toString('base64')} ${comment}`,
    fingerprint: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`,
  };
}

/** A new ed25519 key pair; `comment` ends the public key line (the user's e-mail, so a git host shows whose it is). */
export function generateSshKey(comment: string): SshKeyPair {
  const { privateKey } = generateKeyPairSync('ed25519');
  return describeKey(privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), comment);
}

/** The private key as an unencrypted OpenSSH key file (`-----BEGIN OPENSSH PRIVATE KEY-----`), for `ssh -i`. */
export function openSshPrivateKeyFile(privatePem: string, comment: string): string {
  const { seed, publicBytes } = rawKeys(privatePem);
  const blob = publicKeyBlob(privatePem);
  const check = randomBytes(4);
  let section = Buffer.concat([check, check, sshString(KEY_TYPE), sshString(publicBytes), sshString(Buffer.concat([seed, publicBytes])), sshString(comment)]);
  const padding = [];
  for (let i = 1; (section.length + padding.length) % 8 !== 0; i++) padding.push(i);
  section = Buffer.concat([section, Buffer.from(padding)]);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(1);
  const body = Buffer.concat([Buffer.from('openssh-key-v1\0'), sshString('none'), sshString('none'), sshString(''), count, sshString(blob), sshString(section)]);
  const lines = body.toString('base64').match(/.{1,70}/g)!;
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}
