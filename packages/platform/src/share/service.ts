// Share links: made and removed by the team, opened by anyone who has the
// shareId. A deleted link stops at once (every request reads the store); an
// expired one is refused; each visitor may send at most the link's QPM.
import { randomBytes } from 'node:crypto';
import type { AppsService } from '../apps/service.js';
import { errors, PlatformError } from '../http/errors.js';
import { newId, type KeyCaller } from '../keys/auth.js';
import type { OutLinkRow, OutLinksStore } from './store.js';

/** The caller a share link chats as: its app in its team, and the visitor it speaks for. */
export interface ShareCaller extends KeyCaller {
  appId: string;
  visitor: { shareId: string; outLinkUid: string };
}

export interface NewOutLink {
  appId: string;
  name: string;
  expiresAt?: number;
  qpm?: number;
}

const WINDOW_MS = 60_000;

export class ShareService {
  /**
   * Request times per link and visitor, for QPM. In this process only: with
   * several platform processes a visitor may send up to QPM to each.
   */
  private readonly recent = new Map<string, number[]>();

  constructor(
    private readonly store: OutLinksStore,
    private readonly apps: AppsService,
  ) {}

  async create(caller: KeyCaller, input: NewOutLink): Promise<string> {
    await this.apps.app(caller, input.appId); // 404 for another team's
    const shareId = randomBytes(18).toString('base64url');
    await this.store.insert({
      id: newId(),
      share_id: shareId,
      team_id: caller.teamId,
      app_id: input.appId,
      name: input.name,
      expires_at: input.expiresAt ?? null,
      qpm: input.qpm ?? null,
      created_at: Date.now(),
      last_used_at: null,
    });
    return shareId;
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

  /** A visitor's chat request: the link must be usable and the visitor within its QPM. */
  async caller(shareId: string, outLinkUid: string, now = Date.now()): Promise<ShareCaller> {
    const link = await this.open(shareId, now);
    if (link.qpm !== null) this.admit(`${link.id}\n${outLinkUid}`, link.qpm, now);
    await this.store.touch(link.id, now);
    return { keyId: null, teamId: link.team_id, appId: link.app_id, visitor: { shareId, outLinkUid } };
  }

  /** A visitor reading their own chats: the link must be usable (no QPM: reading is cheap). */
  async reader(shareId: string, outLinkUid: string): Promise<ShareCaller> {
    const link = await this.open(shareId);
    return { keyId: null, teamId: link.team_id, appId: link.app_id, visitor: { shareId, outLinkUid } };
  }

  private admit(key: string, qpm: number, now: number): void {
    const times = (this.recent.get(key) ?? []).filter((t) => t > now - WINDOW_MS);
    if (times.length >= qpm) {
      const retryAfter = Math.max(1, Math.ceil((times[0]! + WINDOW_MS - now) / 1000));
      throw new PlatformError(429, 'rate_limited', `This share link allows ${qpm} requests per minute per visitor: try again in ${retryAfter} s`, {
        'retry-after': String(retryAfter),
      });
    }
    times.push(now);
    this.recent.set(key, times);
    // Bounded: visitors gone quiet are forgotten.
    if (this.recent.size > 10_000) for (const [k, v] of this.recent) if (!v.some((t) => t > now - WINDOW_MS)) this.recent.delete(k);
  }
}
