// A share link's hook (FastGPT's shareAuth): the operator's own server says
// who may chat through the link, and as whom. The platform POSTs
// {hookUrl}/shareAuth/init {token} when the page opens, /start {token,
// question} before each question and /finish {token, responseData} after
// each answer; each is answered {success: true, data: {uid}} or {success:
// false, message}. The hook is called with the link-import rules (no private
// address unless SHARE_HOOK_ALLOW_PRIVATE=true, no redirect) and 5 s to answer.
import { IngestError } from '../ingest/errors.js';
import { fetchRaw, type HostResolver } from '../ingest/link.js';
import { PlatformError } from '../http/errors.js';

export type HookStep = 'init' | 'start' | 'finish';

export const HOOK_TIMEOUT_MS = 5_000;
/** A hook's answer is a small JSON object. */
const HOOK_MAX_BYTES = 64 * 1024;

export interface HookOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  /** DNS resolution (tests give one). */
  resolve?: HostResolver;
}

/**
 * A hook that could not be asked, or answered what is not an answer: the
 * visitor is told only that the check failed (the hook's address, which may
 * hold a secret, and the network's details are the operator's); `detail`
 * says why, for the platform's log.
 */
export class ShareHookFailure extends PlatformError {
  constructor(readonly detail: string) {
    super(403, 'share_auth_failed', "The sign-in check of this share link failed; the team that shared it can find why in the platform's log.");
  }
}

/** The visitor's uid, as the hook answers it; a refusal, a failure or silence is a 403 with what the visitor is told. */
export async function callShareHook(hookUrl: string, step: HookStep, body: Record<string, unknown>, opts: HookOptions): Promise<string> {
  const url = `${hookUrl.replace(/\/+$/, '')}/shareAuth/${step}`;
  const timeoutMs = opts.timeoutMs ?? HOOK_TIMEOUT_MS;
  let text: string;
  try {
    const raw = await fetchRaw(url, {
      postJson: JSON.stringify(body),
      allowPrivate: opts.allowPrivate,
      maxRedirects: 0,
      maxBytes: HOOK_MAX_BYTES,
      timeoutMs,
      resolve: opts.resolve,
      userAgent: 'kbchat-share-auth/0.1',
    });
    text = raw.data.toString('utf8');
  } catch (err) {
    if (err instanceof IngestError && err.code === 'link_timeout') {
      throw new PlatformError(
        403,
        'share_auth_timeout',
        `The sign-in check of this share link did not answer within ${Math.round(timeoutMs / 1000)} s: try again later.`,
      );
    }
    const forbidden = err instanceof IngestError && err.code === 'link_forbidden_address';
    throw new ShareHookFailure(forbidden ? (err as Error).message.replace('LINK_ALLOW_PRIVATE', 'SHARE_HOOK_ALLOW_PRIVATE') : (err as Error).message);
  }
  let answer: { success?: unknown; message?: unknown; data?: { uid?: unknown } };
  try {
    answer = JSON.parse(text);
  } catch {
    throw new ShareHookFailure(`${url} did not answer JSON`);
  }
  if (answer?.success !== true) {
    const message = typeof answer?.message === 'string' && answer.message.trim() ? answer.message.trim().slice(0, 500) : 'You may not chat here.';
    throw new PlatformError(403, 'share_auth_refused', message);
  }
  const uid = answer.data?.uid;
  // At most 123: the uid is kept as "hook:<uid>" in a column of 128 (share/service.ts).
  if (typeof uid !== 'string' || !uid || uid.length > 123)
    throw new ShareHookFailure(`${url} answered success without a uid (a string of 1 to 123 characters)`);
  return uid;
}
