// Share links: made, changed and removed by the team, opened by anyone who
// has the shareId. A deleted link stops at once (every request reads the
// store); an expired one, or one past its usage points, is refused; each
// visitor may send at most the link's QPM, and all together its link QPM. A
// link with a hook asks the operator's server who the visitor is (auth-hook.ts).
import { randomBytes } from 'node:crypto';
import type { AppsService } from '../apps/service.js';
import { errors, PlatformError } from '../http/errors.js';
import { newId, type KeyCaller } from '../keys/auth.js';
import { callShareHook, ShareHookFailure, type HookOptions, type HookStep } from './auth-hook.js';
import { allowedOrigins, type OutLinkRow, type OutLinksStore } from './store.js';

/** The caller a share link chats as: its app in its team, and the visitor it speaks for. */
export interface ShareCaller extends KeyCaller {
  appId: string;
  visitor: { shareId: string; outLinkUid: string };
  /** The link's hook and the visitor's token: the answer is reported to it (finish). */
  hook?: { url: string; token: string; linkId: string };
}

export interface OutLinkSettings {
  name?: string;
  /** Each: a value sets it, null clears it, absent leaves it. */
  expiresAt?: number | null;
  qpm?: number | null;
  linkQpm?: number | null;
  maxUsagePoints?: number | null;
  hookUrl?: string | null;
  allowedOrigins?: string[];
}

/** Who asks: the visitor's own id (a link without a hook), or their token (a link with one). */
export interface VisitorClaim {
  outLinkUid?: string;
  authToken?: string;
}

const WINDOW_MS = 60_000;
/** How long a token's uid from the init hook is taken as known for reading chats (the start hook runs on every question). */
const READER_CACHE_MS = 60_000;

export class ShareService {
  /**
   * Request times per link and visitor (and per link), for QPM. In this
   * process only: with several platform processes each admits up to QPM.
   */
  private readonly recent = new Map<string, number[]>();
  private readonly readers = new Map<string, { uid: string; at: number }>();

  constructor(
    private readonly store: OutLinksStore,
    private readonly apps: AppsService,
    private readonly hookOptions: HookOptions = { allowPrivate: false },
    private readonly onHookError: (err: unknown) => void = () => {},
  ) {}

  async create(caller: KeyCaller, input: { appId: string; name: string } & OutLinkSettings): Promise<string> {
    await this.apps.app(caller, input.appId); // 404 for another team's
    const shareId = randomBytes(18).toString('base64url');
    await this.store.insert({
      id: newId(),
      share_id: shareId,
      team_id: caller.teamId,
      app_id: input.appId,
      name: input.name,
      created_at: Date.now(),
      last_used_at: null,
      expires_at: input.expiresAt ?? null,
      qpm: input.qpm ?? null,
      link_qpm: input.linkQpm ?? null,
      max_usage_points: input.maxUsagePoints ?? null,
      hook_url: input.hookUrl ?? null,
      allowed_origins: JSON.stringify(input.allowedOrigins ?? []),
    });
    return shareId;
  }

  async update(caller: KeyCaller, id: string, s: OutLinkSettings): Promise<OutLinkRow> {
    const set = {
      ...(s.name !== undefined ? { name: s.name } : {}),
      ...(s.expiresAt !== undefined ? { expires_at: s.expiresAt } : {}),
      ...(s.qpm !== undefined ? { qpm: s.qpm } : {}),
      ...(s.linkQpm !== undefined ? { link_qpm: s.linkQpm } : {}),
      ...(s.maxUsagePoints !== undefined ? { max_usage_points: s.maxUsagePoints } : {}),
      ...(s.hookUrl !== undefined ? { hook_url: s.hookUrl } : {}),
      ...(s.allowedOrigins !== undefined ? { allowed_origins: JSON.stringify(s.allowedOrigins) } : {}),
    };
    if (Object.keys(set).length && !(await this.store.update(caller.teamId, id, set))) throw errors.notFound(`Share link ${id}`);
    const link = await this.store.get(caller.teamId, id);
    if (!link) throw errors.notFound(`Share link ${id}`);
    return link;
  }

  async list(caller: KeyCaller, appId: string): Promise<OutLinkRow[]> {
    await this.apps.app(caller, appId);
    return this.store.list(caller.teamId, appId);
  }

  async remove(caller: KeyCaller, id: string): Promise<void> {
    if (!(await this.store.remove(caller.teamId, id))) throw errors.notFound(`Share link ${id}`);
  }

  /** The link behind a shareId, if it may be used now. */
  async open(shareId: string, now = Date.now()): Promise<OutLinkRow> {
    const link = await this.store.byShareId(shareId);
    if (!link) throw new PlatformError(404, 'share_link_not_found', 'share link not found: it was deleted, or the address is wrong');
    if (link.expires_at !== null && link.expires_at <= now)
      throw new PlatformError(403, 'share_link_expired', `This share link expired at ${new Date(link.expires_at).toISOString()}`);
    return link;
  }

  /** The sites that may embed the link's page (empty: any, and for a link that cannot be opened). */
  async frameOrigins(shareId: string): Promise<string[]> {
    const link = await this.store.byShareId(shareId);
    return link ? allowedOrigins(link) : [];
  }

  /** The page opens: the link, and (with a hook) the visitor's uid from the operator's server. */
  async init(shareId: string, authToken: string | undefined): Promise<{ link: OutLinkRow; uid?: string; allowedOrigins: string[] }> {
    const link = await this.open(shareId);
    const uid = link.hook_url ? await this.readerUid(link, authToken) : undefined;
    return { link, uid, allowedOrigins: allowedOrigins(link) };
  }

  /**
   * A visitor's question: the link must be usable, within its usage points
   * and QPMs, and (with a hook) the operator's server must let the visitor
   * ask, which also says who they are. Nothing is asked of a model before.
   */
  async caller(shareId: string, claim: VisitorClaim, question: string, now = Date.now()): Promise<ShareCaller> {
    const link = await this.open(shareId, now);
    if (link.max_usage_points !== null && link.used_points >= link.max_usage_points) {
      throw new PlatformError(
        403,
        'share_link_usage_exhausted',
        `This share link has used its ${link.max_usage_points} usage points (${round(link.used_points)} spent): the team that shared it can raise the limit.`,
      );
    }
    let outLinkUid = claim.outLinkUid;
    let hook: ShareCaller['hook'];
    // The link's own bound first: nobody makes the platform ask the operator's hook faster than the link allows.
    if (link.link_qpm !== null) this.admit(link.id, link.link_qpm, now, `${link.link_qpm} requests per minute in all`);
    if (link.hook_url) {
      const token = this.token(claim);
      outLinkUid = hookVisitor(await this.askHook(link, 'start', { token, question }));
      hook = { url: link.hook_url, token, linkId: link.id };
    } else checkOwnUid(outLinkUid);
    if (!outLinkUid) throw errors.badField('outLinkUid', "required with shareId: the visitor's own id, which keeps their chats apart");
    if (link.qpm !== null) this.admit(`${link.id}\n${outLinkUid}`, link.qpm, now, `${link.qpm} requests per minute per visitor`);
    await this.store.touch(link.id, now);
    return { keyId: null, teamId: link.team_id, appId: link.app_id, visitor: { shareId, outLinkUid }, ...(hook ? { hook } : {}) };
  }

  /** A visitor reading their own chats: the link must be usable (no QPM: reading is cheap); with a hook, the token says who they are. */
  async reader(shareId: string, claim: VisitorClaim): Promise<ShareCaller> {
    const link = await this.open(shareId);
    const outLinkUid = link.hook_url ? hookVisitor(await this.readerUid(link, claim.authToken)) : checkOwnUid(claim.outLinkUid);
    if (!outLinkUid) throw errors.badField('outLinkUid', "required with shareId: the visitor's own id");
    return { keyId: null, teamId: link.team_id, appId: link.app_id, visitor: { shareId, outLinkUid } };
  }

  /** Tells the operator's server about an answer; the visitor does not wait, and a failure is only logged. */
  finished(hook: NonNullable<ShareCaller['hook']>, responseData: unknown): void {
    callShareHook(hook.url, 'finish', { token: hook.token, responseData }, this.hookOptions).catch((err) =>
      this.onHookError(new Error(`the hook of share link ${hook.linkId} (finish): ${err instanceof ShareHookFailure ? err.detail : (err as Error).message}`)),
    );
  }

  /** Asks the link's hook; why a call failed goes to the log (the visitor is told only that it did). */
  private async askHook(link: OutLinkRow, step: HookStep, body: Record<string, unknown>): Promise<string> {
    try {
      return await callShareHook(link.hook_url!, step, body, this.hookOptions);
    } catch (err) {
      if (err instanceof ShareHookFailure) this.onHookError(new Error(`the hook of share link ${link.id} (${step}): ${err.detail}`));
      throw err;
    }
  }

  private token(claim: VisitorClaim): string {
    if (!claim.authToken)
      throw new PlatformError(
        401,
        'share_auth_required',
        "This share link needs the visitor's token (authToken): open it from the page that gave you the link.",
      );
    return claim.authToken;
  }

  private async readerUid(link: OutLinkRow, authToken: string | undefined): Promise<string> {
    const token = this.token({ authToken });
    const key = `${link.id}\n${token}`;
    const hit = this.readers.get(key);
    if (hit && Date.now() - hit.at < READER_CACHE_MS) return hit.uid;
    // Opening the page asks the hook once per new token: bounded like questions, so that random tokens cannot make it ask without end.
    if (link.link_qpm !== null) this.admit(`init\n${link.id}`, link.link_qpm, Date.now(), `${link.link_qpm} requests per minute in all`);
    const uid = await this.askHook(link, 'init', { token });
    if (this.readers.size > 10_000) this.readers.clear();
    this.readers.set(key, { uid, at: Date.now() });
    return uid;
  }

  private admit(key: string, qpm: number, now: number, what: string): void {
    const times = (this.recent.get(key) ?? []).filter((t) => t > now - WINDOW_MS);
    if (times.length >= qpm) {
      const retryAfter = Math.max(1, Math.ceil((times[0]! + WINDOW_MS - now) / 1000));
      throw new PlatformError(429, 'rate_limited', `This share link allows ${what}: try again in ${retryAfter} s`, {
        'retry-after': String(retryAfter),
      });
    }
    times.push(now);
    this.recent.set(key, times);
    // Bounded: visitors gone quiet are forgotten.
    if (this.recent.size > 10_000) for (const [k, v] of this.recent) if (!v.some((t) => t > now - WINDOW_MS)) this.recent.delete(k);
  }
}

/**
 * The visitor id a hook's uid is stored as: marked, so that nobody can claim
 * it as their own id on a link without a hook (a hook removed later, its
 * members' uids guessable such as an e-mail address).
 */
const HOOK_UID_PREFIX = 'hook:';

function hookVisitor(uid: string): string {
  return `${HOOK_UID_PREFIX}${uid}`;
}

/** A visitor id the page sent (a link without a hook): never one of a hook's. */
function checkOwnUid(uid: string | undefined): string | undefined {
  if (uid?.startsWith(HOOK_UID_PREFIX))
    throw errors.badField('outLinkUid', `must not start with "${HOOK_UID_PREFIX}": those are the ids a share link's sign-in check gives`);
  return uid;
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
