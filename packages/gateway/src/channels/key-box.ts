// Upstream keys must be read back to be used, so they cannot be hashed; they
// are sealed with AES-256-GCM under the gateway secret (GATEWAY_SECRET_KEY, or
// a random one kept in <data-dir>/gateway-secret.key, created on first start).
// Several gateway processes on one database must share GATEWAY_SECRET_KEY.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class KeyBox {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHash('sha256').update(secret).digest();
  }

  static fromConfig(secret: string | undefined, dataDir: string): KeyBox {
    if (secret) return new KeyBox(secret);
    const file = join(dataDir, 'gateway-secret.key');
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
    }
    return new KeyBox(readFileSync(file, 'utf8').trim());
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${body.toString('base64')}`;
  }

  /**
   * A key's name in the store (a pool key's state): an HMAC under the gateway
   * secret, so that the row names the key across edits of the pool without
   * holding anything that could be checked against a guessed key elsewhere.
   */
  fingerprint(plain: string): string {
    return createHmac('sha256', this.key).update(plain).digest('hex').slice(0, 32);
  }

  open(sealed: string): string {
    const [v, iv, tag, body] = sealed.split(':');
    if (v !== 'v1' || !iv || !tag || body === undefined) throw new Error('channel key is not sealed in a known format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('channel key cannot be unsealed: GATEWAY_SECRET_KEY differs from the one it was stored with');
    }
  }
}
