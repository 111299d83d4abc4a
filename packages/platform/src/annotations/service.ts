// Annotations of an application, for its team: made by hand, from an answer
// in the chat log (chatId + dataId), or from a CSV file; read, changed and
// deleted; exported. Another team's application or annotation is a 404.
import type { AnnotationsImported } from '@kbchat/contracts';
import type { AppsService } from '../apps/service.js';
import type { ChatHistoryStore } from '../chat/history-store.js';
import { errors } from '../http/errors.js';
import { parseCsv } from '../ingest/readers/csv.js';
import { newId, type KeyCaller } from '../keys/auth.js';
import { normaliseQuestion, type AnnotationMatcher } from './matcher.js';
import type { AnnotationRow, AnnotationsStore, AnnotationWithHits } from './store.js';

export const QUESTION_MAX = 10_000;
export const ANSWER_MAX = 100_000;
/** Rows of one import: more is a file for several imports. */
export const IMPORT_MAX_ROWS = 20_000;

export class AnnotationsService {
  constructor(
    private readonly store: AnnotationsStore,
    private readonly apps: AppsService,
    private readonly history: ChatHistoryStore,
    private readonly matcher: AnnotationMatcher,
  ) {}

  async create(caller: KeyCaller, input: { appId: string; question: string; answer: string; chatId?: string; dataId?: string }): Promise<string> {
    await this.apps.app(caller, input.appId); // 404 for another team's
    if (input.chatId && input.dataId) {
      const item = await this.history.item({ teamId: caller.teamId, appId: input.appId, chatId: input.chatId }, input.dataId);
      if (!item || item.role !== 'assistant') throw errors.notFound(`Answer ${input.dataId} of chat ${input.chatId}`);
    }
    const id = newId();
    const now = Date.now();
    await this.store.insert([row(caller, input.appId, input.question, input.answer, now, id, input.chatId, input.dataId)]);
    this.matcher.forget(input.appId);
    return id;
  }

  async list(
    caller: KeyCaller,
    q: { appId: string; offset: number; pageSize: number; searchText?: string },
  ): Promise<{ list: AnnotationWithHits[]; total: number }> {
    await this.apps.app(caller, q.appId);
    const { rows, total } = await this.store.list(caller.teamId, q.appId, { offset: q.offset, limit: q.pageSize, searchText: q.searchText || undefined });
    return { list: rows, total };
  }

  async update(caller: KeyCaller, input: { id: string; question?: string; answer?: string }): Promise<AnnotationRow> {
    const found = await this.store.get(caller.teamId, input.id);
    if (!found) throw errors.notFound(`Annotation ${input.id}`);
    const questionChanged = input.question !== undefined && input.question !== found.question;
    // A new time for the row, whatever the clock: the matcher's caches notice the change by it.
    const now = Math.max(Date.now(), Number(found.updated_at) + 1);
    // A new question needs a new vector: the next chat makes it.
    await this.store.update(caller.teamId, input.id, {
      ...(input.question !== undefined ? { question: input.question } : {}),
      ...(input.answer !== undefined ? { answer: input.answer } : {}),
      updated_at: now,
      ...(questionChanged ? { vector_model: null, vector: null } : {}),
    });
    this.matcher.forget(found.app_id);
    return { ...found, question: input.question ?? found.question, answer: input.answer ?? found.answer, updated_at: now };
  }

  async delete(caller: KeyCaller, id: string): Promise<void> {
    const found = await this.store.get(caller.teamId, id);
    if (!found || !(await this.store.delete(caller.teamId, id))) throw errors.notFound(`Annotation ${id}`);
    this.matcher.forget(found.app_id);
  }

  /**
   * Rows of question,answer (a first row "question,answer" is a header). A
   * row is left out, and named, when either is empty or too long, or when
   * its question is already one of the app's (or an earlier row's).
   */
  async import(caller: KeyCaller, appId: string, csv: string): Promise<AnnotationsImported> {
    await this.apps.app(caller, appId);
    const rows = parseCsv(csv, csv.includes('\t') && !csv.includes(',') ? { delimiter: '\t' } : { delimiter: ',' });
    if (rows.length > IMPORT_MAX_ROWS) throw errors.badField('csv', `has ${rows.length} rows; one import takes at most ${IMPORT_MAX_ROWS}`);
    const seen = new Set((await this.store.questions(appId)).map(normaliseQuestion));
    const skipped: AnnotationsImported['skipped'] = [];
    const now = Date.now();
    const fresh: AnnotationRow[] = [];
    rows.forEach((cells, i) => {
      const question = fromExport(cells[0]);
      const answer = fromExport(cells[1]);
      if (i === 0 && question.toLowerCase() === 'question' && answer.toLowerCase() === 'answer') return;
      if (cells.every((c) => !c.trim())) return;
      const reason = !question
        ? 'the question is empty'
        : !answer
          ? 'the answer is empty'
          : question.length > QUESTION_MAX
            ? `the question is longer than ${QUESTION_MAX} characters`
            : answer.length > ANSWER_MAX
              ? `the answer is longer than ${ANSWER_MAX} characters`
              : seen.has(normaliseQuestion(question))
                ? 'the application already has this question'
                : undefined;
      if (reason) return void skipped.push({ row: i + 1, reason });
      seen.add(normaliseQuestion(question));
      // Distinct times keep the file's order in the list (newest first) and in an export (oldest first).
      fresh.push(row(caller, appId, question, answer, now + fresh.length));
    });
    for (let i = 0; i < fresh.length; i += 500) await this.store.insert(fresh.slice(i, i + 500));
    if (fresh.length) this.matcher.forget(appId);
    return { created: fresh.length, skipped };
  }

  /** The annotations that correct these answers of one chat (for the team's reading of it), by answer id. */
  corrections(scope: { teamId: string; appId: string }, chatId: string, dataIds: string[]): Promise<Map<string, AnnotationRow>> {
    return this.store.forAnswers(scope.teamId, scope.appId, chatId, dataIds);
  }

  /** Every annotation of the app, in pages, for an export. */
  async exportPages(caller: KeyCaller, appId: string): Promise<AsyncGenerator<AnnotationRow[]>> {
    await this.apps.app(caller, appId);
    return this.store.all(caller.teamId, appId);
  }
}

/** A cell as written: trimmed, without the apostrophe an export puts before a formula-like cell (http/csv.ts). */
function fromExport(cell: string | undefined): string {
  return (cell ?? '').trim().replace(/^'(?=[=+\-@])/, '');
}

function row(caller: KeyCaller, appId: string, question: string, answer: string, now: number, id = newId(), chatId?: string, dataId?: string): AnnotationRow {
  return {
    id,
    team_id: caller.teamId,
    app_id: appId,
    question,
    answer,
    chat_id: chatId ?? null,
    data_id: dataId ?? null,
    vector_model: null,
    vector: null,
    created_at: now,
    updated_at: now,
  };
}
