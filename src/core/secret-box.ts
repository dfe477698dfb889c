// Secrets at rest: AES-256-GCM with a key from the server's configuration. The additional data binds each
// ciphertext to its place (vault and name), so a value copied to another row does not open.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

export interface SealedSecret {
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
  keyId: string;
}

export class SecretBox {
  readonly keyId: string;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the secrets key must be 32 bytes (base64 of 32 random bytes)');
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 12);
  }

  seal(plaintext: string, place: string): SealedSecret {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(place));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { nonce, ciphertext, tag: cipher.getAuthTag(), keyId: this.keyId };
  }

  /**
   * A value derived from the key for `purpose` (HMAC-SHA256, hex): the same for the same key and purpose, and
   * unguessable without the key. For secrets svc makes itself and never stores (generated-secrets.ts).
   */
  derive(purpose: string): string {
    return createHmac('sha256', this.key).update(purpose).digest('hex');
  }

  /** The plaintext; throws when the key is another or the value was moved or changed. */
  open(sealed: SealedSecret, place: string): string {
    if (sealed.keyId !== this.keyId) throw new Error(`sealed with key ${sealed.keyId}, the server has ${this.keyId}`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.nonce);
    decipher.setAAD(Buffer.from(place));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
  }
}
