// Secrets the platform must read back to use (a tool source's headers, such as
// an Authorization), so they cannot be hashed: they are sealed with
// AES-256-GCM under the platform secret (PLATFORM_SECRET_KEY, or a random one
// kept in <data-dir>/platform-secret.key, made at first start), as the
// gateway seals its channel keys (gateway/src/channels/key-box.ts). Several
// platform processes on one database must share PLATFORM_SECRET_KEY.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_KEY_FILE = 'platform-secret.key';

export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHash('sha256').update(secret).digest();
  }

  static fromConfig(secret: string | undefined, dataDir: string): SecretBox {
    if (secret) return new SecretBox(secret);
    const file = join(dataDir, SECRET_KEY_FILE);
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      // 'wx': two processes starting on one new data folder keep the first one's key.
      try {
        writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
      } catch (err) {
        if ((err as { code?: string }).code !== 'EEXIST') throw err;
      }
    }
    return new SecretBox(readFileSync(file, 'utf8').trim());
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${body.toString('base64')}`;
  }

  open(sealed: string): string {
    const [v, iv, tag, body] = sealed.split(':');
    if (v !== 'v1' || !iv || !tag || body === undefined) throw new Error('the secret is not sealed in a known format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('the secret cannot be unsealed: PLATFORM_SECRET_KEY differs from the one it was stored with');
    }
  }
}

/**
 * What a stored secret shows: its scheme word and its last four characters
 * ("Bearer …abcd"), or only "…" for a value too short to show any of it.
 */
export function secretHint(value: string): string {
  const v = value.trim();
  const scheme = /^([A-Za-z][\w-]{0,30})\s+(\S.*)$/.exec(v);
  const [prefix, rest] = scheme ? [`${scheme[1]} `, scheme[2]!] : ['', v];
  return rest.length >= 12 ? `${prefix}…${rest.slice(-4)}` : `${prefix}…`;
}
