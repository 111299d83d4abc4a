// The first step of a chat turn when the app has annotationReply on: the
// closest annotation is recorded whether or not it reaches the app's
// similarity (the record shows how close the best one came), and answers
// only when it does. A failure here never stops the chat.
import type { AnnotationMatcher } from '../annotations/matcher.js';
import type { App } from '../apps/service.js';
import type { GatewayClient, ModelCall } from '../gateway-client/index.js';
import { secondsSince, type StepRecord } from './records.js';

export async function annotationReply(
  matcher: AnnotationMatcher,
  gateway: GatewayClient,
  app: App,
  question: string,
  records: StepRecord[],
): Promise<{ id: string; answer: string } | undefined> {
  const started = performance.now();
  const similarity = app.settings.annotationReply.similarity;
  const record = { moduleName: 'Annotation reply', moduleType: 'annotationReply', query: question, similarity } as const;
  try {
    const m = await matcher.match(gateway, app, question);
    if (!m) return undefined;
    records.push({
      ...record,
      runningTime: secondsSince(started),
      annotationId: m.id,
      score: m.score,
      used: m.used,
      method: m.method,
      ...(m.model ? { model: m.model, inputTokens: m.inputTokens } : {}),
      ...(m.error ? { error: m.error } : {}),
      ...(m.requestIds.length
        ? {
            modelCalls: m.requestIds.map(
              (requestId) =>
                ({ step: 'annotationReply', kind: 'embeddings', model: m.model!, requestId, runningTime: secondsSince(started) }) satisfies ModelCall,
            ),
          }
        : {}),
    });
    return m.used ? m : undefined;
  } catch (err) {
    records.push({ ...record, runningTime: secondsSince(started), used: false, error: (err as Error).message });
    return undefined;
  }
}
