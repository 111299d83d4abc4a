import { randomBytes } from 'node:crypto';

// Request ids sort by time (yyyymmddhhmmss + ms) and end with randomness, so
// that a log search by id prefix finds a time window.
let pool = randomBytes(4096);
let poolOffset = 0;

function randomHex(bytes: number): string {
  if (poolOffset + bytes > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  const out = pool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return out;
}

let lastMs = -1;
let lastStamp = '';

export function newRequestId(now = Date.now()): string {
  if (now !== lastMs) {
    const iso = new Date(now).toISOString(); // 2026-11-22T18:50:45.123Z
    lastStamp = iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13) + iso.slice(14, 16) + iso.slice(17, 19) + iso.slice(20, 23);
    lastMs = now;
  }
  return lastStamp + randomHex(6);
}

export function randomSecret(prefix: string, bytes = 24): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

// A caller's own request id (the platform sends its own to the gateway) is
// taken only in this shape: it travels into headers, logs and the request log
// (varchar(64)), and is what the gateway's admin API looks up by.
const CALLER_REQUEST_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The X-Request-Id a caller sent when it is well formed (1-64 of A-Z a-z 0-9 _ -), else undefined. */
export function callerRequestId(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && CALLER_REQUEST_ID.test(header) ? header : undefined;
}
