// Hashing for what the gateway must recognise but never needs to read back:
// token keys (sha256: they are long random strings) and passwords (scrypt).
import { createHash } from 'node:crypto';

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Keys shorter than this get no hint at all: a few characters would give most of them away. */
export const KEY_HINT_MIN_LENGTH = 20;

/**
 * A key as it may be shown again later: its first three and last four
 * characters (`sk-...abcd`), for keys of 20 characters or more; `***` for
 * shorter ones (an INITIAL_ROOT_TOKEN such as `sk-t` would otherwise be shown whole).
 */
export function keyHint(key: string): string {
  if (key.length < KEY_HINT_MIN_LENGTH) return '***';
  return `${key.slice(0, 3)}...${key.slice(-4)}`;
}

/**
 * A stored hint as it may be shown: hints written before keyHint took its
 * present form (first six and last four characters, of any key) are not
 * safe to show, since the key's length is unknown; they become `***`.
 */
export function shownKeyHint(stored: string): string {
  return stored === '***' || /^[^]{3}\.\.\.[^]{4}$/.test(stored) ? stored : '***';
}

// Passwords: scrypt, shared with the platform.
export { hashPassword, verifyPassword } from '@kbchat/server-kit';
