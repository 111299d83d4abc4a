// QA mode: the dataset's LLM turns each source chunk into question/answer
// pairs; the pairs become data rows with their default index, and chunk items
// for them are queued, all in the transaction that completes the QA item.
import { buildQaPrompt, parseQaPairs } from '../ingest/qa.js';
import { insertDataWithIndexes, loadQaPrompts, type NewDataRow } from './data-store.js';
import { NO_QA_MODEL, NotConfiguredError, ParseFailureError } from './errors.js';
import { enqueue, type QueueItem } from './queue-store.js';
import type { BatchProcessor } from './worker.js';

export interface QaIndexingDeps {
  /** A non-stream chat completion through the gateway (GatewayClient.chat). Absent: no LLM configured. */
  chat?: (body: Record<string, unknown>) => Promise<{ json: any }>;
  /** The dataset's LLM (its agentModel), or undefined when none is configured. */
  qaModelOf(datasetId: string): string | undefined | Promise<string | undefined>;
  /** Ids for new data rows (the platform's short random ids). */
  newId(): string;
}

export interface QaPayload {
  text: string;
  chunkIndex?: number;
}

type Prepared = Map<number, NewDataRow[]>;

export function indexQa(deps: QaIndexingDeps): BatchProcessor<Prepared> {
  return {
    unavailable: deps.chat ? undefined : NO_QA_MODEL,
    async prepare(items: QueueItem[], db) {
      const datasetId = items[0]!.datasetId;
      const model = await deps.qaModelOf(datasetId);
      if (!model || !deps.chat) throw new NotConfiguredError(NO_QA_MODEL, datasetId);
      const prompts = await loadQaPrompts(db, [...new Set(items.map((i) => i.collectionId))]);
      const out: Prepared = new Map();
      await Promise.all(
        items.map(async (item) => {
          const payload = JSON.parse(item.payload ?? '{}') as QaPayload;
          if (!payload.text?.trim()) throw new Error(`QA item ${item.id} has no source text`);
          const prompt = buildQaPrompt(payload.text, prompts.get(item.collectionId) ?? undefined);
          const { json } = await deps.chat!({ model, messages: [{ role: 'user', content: prompt }] });
          const answer = String(json?.choices?.[0]?.message?.content ?? '');
          const pairs = parseQaPairs(answer);
          if (!pairs.length) {
            throw new ParseFailureError(`the model ${model} gave no question/answer pairs; its answer began: ${JSON.stringify(answer.slice(0, 200))}`);
          }
          out.set(
            item.id,
            pairs.map((p) => ({
              id: deps.newId(),
              datasetId: item.datasetId,
              collectionId: item.collectionId,
              teamId: item.teamId,
              q: p.q,
              a: p.a,
              chunkIndex: payload.chunkIndex ?? 0,
            })),
          );
        }),
      );
      return out;
    },
    async commit(tx, items, prepared) {
      const rows = items.flatMap((i) => prepared.get(i.id) ?? []);
      await insertDataWithIndexes(tx, rows);
      await enqueue(
        tx,
        rows.map((r) => ({ teamId: r.teamId, datasetId: r.datasetId, collectionId: r.collectionId, dataId: r.id, mode: 'chunk' as const })),
      );
    },
  };
}
