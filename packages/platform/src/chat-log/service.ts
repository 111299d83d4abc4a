// An application's chat log for its team: chats by filter, every message of
// them for an export, and its figures per hour or day. No HTTP here.
import type { AppStats, ExportedMessage } from '@kbchat/contracts';
import type { AppsService } from '../apps/service.js';
import { errors } from '../http/errors.js';
import type { KeyCaller } from '../keys/auth.js';
import type { ChatLogFilter, ChatLogRow, ChatLogStore, ExportRow, FigureRow } from './store.js';

export type { ChatLogFilter };

const HOUR = 3_600_000;
const BUCKET_MS = { hour: HOUR, day: 24 * HOUR } as const;
/** Buckets of one figures request: a year of days, or six weeks of hours. */
export const MAX_BUCKETS = 1_000;

export class ChatLogService {
  constructor(
    private readonly store: ChatLogStore,
    private readonly apps: AppsService,
  ) {}

  async page(caller: KeyCaller, appId: string, f: ChatLogFilter, offset: number, limit: number): Promise<{ rows: ChatLogRow[]; total: number }> {
    await this.checked(caller, appId, f);
    return this.store.page(caller.teamId, appId, f, offset, limit);
  }

  /** Every message of the chats the filter selects, in batches (see ChatLogStore.messages). */
  async messages(caller: KeyCaller, appId: string, f: ChatLogFilter): Promise<AsyncGenerator<ExportedMessage[]>> {
    await this.checked(caller, appId, f);
    const batches = this.store.messages(caller.teamId, appId, f);
    return (async function* () {
      for await (const rows of batches) yield rows.map(exportedMessage);
    })();
  }

  async stats(caller: KeyCaller, appId: string, q: { from?: number; to?: number; bucket: 'hour' | 'day' }): Promise<AppStats> {
    await this.apps.app(caller, appId); // 404 for another team's
    const size = BUCKET_MS[q.bucket];
    const to = q.to ?? Date.now();
    const from = q.from ?? to - (q.bucket === 'day' ? 7 : 1) * BUCKET_MS.day;
    if (to <= from) throw errors.badField('to', 'is not after from');
    const first = Math.floor(from / size) * size;
    const count = Math.ceil((to - first) / size);
    if (count > MAX_BUCKETS)
      throw errors.badField('from', `the period has ${count} ${q.bucket}s; ask for at most ${MAX_BUCKETS} (a longer bucket, or a shorter period)`);
    const [rows, [total]] = await Promise.all([this.store.figures(caller.teamId, appId, from, to, size), this.store.figures(caller.teamId, appId, from, to)]);
    const byStart = new Map(rows.map((r) => [r.bucket!, r]));
    const buckets = Array.from({ length: count }, (_, i) => {
      const start = first + i * size;
      return { start: new Date(start).toISOString(), ...publicFigures(byStart.get(start)) };
    });
    return { bucket: q.bucket, from: new Date(from).toISOString(), to: new Date(to).toISOString(), buckets, totals: publicFigures(total) };
  }

  private async checked(caller: KeyCaller, appId: string, f: ChatLogFilter): Promise<void> {
    if (f.from !== undefined && f.to !== undefined && f.to < f.from) throw errors.badField('dateEnd', 'is before dateStart');
    await this.apps.app(caller, appId); // 404 for another team's
  }
}

function publicFigures(r: FigureRow | undefined): AppStats['totals'] {
  return {
    chats: r?.chats ?? 0,
    questions: r?.questions ?? 0,
    visitors: r?.visitors ?? 0,
    goodFeedback: r?.good_feedback ?? 0,
    badFeedback: r?.bad_feedback ?? 0,
    annotationAnswers: r?.annotation_answers ?? 0,
    uncitedAnswers: r?.uncited_answers ?? 0,
    tokens: r?.tokens ?? 0,
    cost: r?.cost ?? 0,
    ttftP50Ms: r?.ttft_p50 ?? null,
    ttftP95Ms: r?.ttft_p95 ?? null,
  };
}

/** "good" or "bad", with the words given where they are more than FastGPT's "yes". */
function feedbackOf(r: ExportRow): string {
  const [kind, words] = r.user_bad_feedback !== null ? ['bad', r.user_bad_feedback] : r.user_good_feedback !== null ? ['good', r.user_good_feedback] : ['', ''];
  return !kind ? '' : words && words !== 'yes' ? `${kind}: ${words}` : kind;
}

export function exportedMessage(r: ExportRow): ExportedMessage {
  return {
    chatId: r.chat_id,
    source: r.source,
    visitor: r.out_link_uid ?? '',
    time: new Date(Number(r.created_at)).toISOString(),
    role: r.role,
    text: r.content,
    feedback: feedbackOf(r),
    annotationId: r.annotation_id ?? '',
    model: r.model ?? '',
    tokens: r.tokens,
    cost: r.cost,
  };
}
