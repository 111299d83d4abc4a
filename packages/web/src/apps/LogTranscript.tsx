// One chat of the log, opened in place, read-only: each answer with its steps,
// its feedback, whether it came from an annotation, the annotation that corrects it, and
// "Improve this answer", which saves the question and a better answer as an
// annotation tied to that stored answer (or edits the one it has).
import type { CreateAnnotationBody, UpdateAnnotationBody } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api } from '../api';
import { MessageView } from '../chat/Message';
import type { ChatMessage } from '../chat/messages-model';
import { sessionTransport } from '../chat/transport';
import { useLang } from '../i18n';
import { Loading } from '../ui';
import { AnnotationForm, type QuestionAnswer } from './AnnotationForm';
import { annotationsKey } from './queries';

const recordsKey = (appId: string, chatId: string) => ['apps', appId, 'chat-logs', chatId] as const;

export function ChatTranscript({ appId, chatId }: { appId: string; chatId: string }) {
  const transport = useMemo(() => sessionTransport(appId), [appId]);
  const { data } = useQuery({ queryKey: recordsKey(appId, chatId), queryFn: () => transport.records(chatId) });
  /** Each answer's question: the last one asked before it. */
  const questions = useMemo(() => {
    const of = new Map<string, string>();
    let asked = '';
    for (const m of data ?? []) {
      if (m.role === 'user') asked = m.text;
      else of.set(m.id, asked);
    }
    return of;
  }, [data]);
  if (!data) return <Loading />;
  return (
    <div className="chat-messages log-transcript">
      {data.map((m) => (
        <MessageView
          key={m.id}
          message={m}
          onTrace={(answer) => transport.modelCalls(chatId, answer.id)}
          extra={(answer) => <AnswerReview appId={appId} chatId={chatId} answer={answer} question={questions.get(answer.id) ?? ''} />}
        />
      ))}
    </div>
  );
}

/** Whether an answer was an annotation's, word for word (annotation reply found one close enough). */
export const fromAnnotation = (m: ChatMessage) => Boolean(m.records?.some((r) => r.moduleType === 'annotationReply' && r.used === true));

function AnswerReview({ appId, chatId, answer, question }: { appId: string; chatId: string; answer: ChatMessage; question: string }) {
  const annotation = answer.annotation;
  const { t } = useLang();
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);

  async function save(v: QuestionAnswer) {
    if (annotation) await api('/api/core/app/annotation/update', { method: 'PUT', json: { id: annotation.id, ...v } satisfies UpdateAnnotationBody });
    else await api<string>('/api/core/app/annotation/create', { json: { appId, chatId, dataId: answer.id, ...v } satisfies CreateAnnotationBody });
    // Shown once the platform has it: this chat's records read again, and the annotations page's lists.
    await client.invalidateQueries({ queryKey: recordsKey(appId, chatId) });
    void client.invalidateQueries({ queryKey: annotationsKey(appId) });
    setEditing(false);
  }

  return (
    <div className="log-review stack" data-testid="answer-review">
      <div className="row">
        {answer.feedback?.good && (
          <span className="badge ok" title={answer.feedback.good}>
            <span>{t('logs.feedback.good')}</span>
          </span>
        )}
        {answer.feedback?.bad && (
          <span className="badge bad" title={answer.feedback.bad}>
            <span>{t('logs.feedback.bad')}</span>
          </span>
        )}
        {fromAnnotation(answer) && (
          <span className="badge ok">
            <span>{t('logs.fromAnnotation')}</span>
          </span>
        )}
        {annotation && (
          <span className="badge warn">
            <span>{t('logs.annotated')}</span>
          </span>
        )}
        {!editing && (
          <button type="button" className="link" onClick={() => setEditing(true)}>
            <span>{annotation ? t('logs.improve.edit') : t('logs.improve')}</span>
          </button>
        )}
      </div>
      {answer.feedback?.bad && answer.feedback.bad !== 'yes' && (
        <p className="muted">
          <span>{answer.feedback.bad}</span>
        </p>
      )}
      {annotation && !editing && (
        <div className="log-annotation">
          <span className="muted">{t('logs.annotatedAnswer')}</span>
          <p>
            <span>{annotation.answer}</span>
          </p>
        </div>
      )}
      {editing && (
        <AnnotationForm
          title={t('logs.improve.title')}
          hint={t('logs.improve.hint')}
          initial={annotation ? { question: annotation.question, answer: annotation.answer } : { question, answer: answer.text }}
          onSave={save}
          onCancel={() => setEditing(false)}
        />
      )}
    </div>
  );
}
