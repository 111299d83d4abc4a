// One conversation: messages, the streamed answer, the input. Finished
// messages are memoised and the streaming answer lives in its own small
// store, so a token re-renders only that answer, however long the chat.
import { useCallback, useEffect, useRef, useState, useSyncExternalStore, type FormEvent, type KeyboardEvent } from 'react';
import type { StepRecord } from '../api';
import { useLang, type MessageKey } from '../i18n';
import { Boundary } from '../ui';
import { Markdown, MessageView } from './Message';
import { newId, type ChatMessage } from './messages-model';
import { ChatStreamError, readChatStream } from './stream';
import type { ChatTransport } from './transport';
import './chat.css';

/** The answer being streamed: text so far and the step running. */
class LiveAnswer {
  text = '';
  step = '';
  private snapshot = { text: '', step: '' };
  private readonly listeners = new Set<() => void>();
  subscribe = (l: () => void) => (this.listeners.add(l), () => void this.listeners.delete(l));
  get = () => this.snapshot;
  update(change: { append?: string; step?: string }) {
    if (change.append) this.text += change.append;
    if (change.step !== undefined) this.step = change.step;
    this.snapshot = { text: this.text, step: this.step };
    this.listeners.forEach((l) => l());
  }
  reset() {
    this.text = '';
    this.step = '';
    this.update({});
  }
}

/** The platform's step names (flowNodeStatus), in the reader's language. */
const STATUS_KEYS: Record<string, MessageKey> = {
  'Question classification': 'chat.step.classifyQuestion',
  'Question completion': 'chat.step.queryExtension',
  'Dataset search': 'chat.step.datasetSearchNode',
  'Content extraction': 'chat.step.contentExtract',
  'AI chat': 'chat.step.chatNode',
};

function StreamingAnswer({ live }: { live: LiveAnswer }) {
  const { t } = useLang();
  const { text, step } = useSyncExternalStore(live.subscribe, live.get);
  return (
    <div className="msg assistant streaming" aria-live="polite">
      <div className="bubble">
        {text ? <Markdown text={text} quotes={[]} /> : <span className="typing" aria-hidden="true" />}
        {step && (
          <p className="muted">
            <span>{t('chat.thinking', { step: STATUS_KEYS[step] ? t(STATUS_KEYS[step]!) : step })}</span>
          </p>
        )}
      </div>
    </div>
  );
}

export interface ConversationProps {
  transport: ChatTransport;
  chatId: string;
  /** The chat's stored messages, when it is an old one. */
  initial?: ChatMessage[];
  /** The app's variables ({{name}} in its prompt), asked for in a form. */
  variableNames?: string[];
  /** A stored chat's variables (the platform keeps them with the chat). */
  initialVariables?: Record<string, string>;
  /** After each turn (the history list may have a new or renamed chat). */
  onTurn?: () => void;
  compact?: boolean;
}

export function Conversation({ transport, chatId, initial, variableNames = [], initialVariables, onTurn, compact }: ConversationProps) {
  const { t } = useLang();
  const [messages, setMessages] = useState<ChatMessage[]>(initial ?? []);
  const [draft, setDraft] = useState('');
  const [busy, setBusy] = useState(false);
  const [variables, setVariables] = useState<Record<string, string>>(initialVariables ?? {});
  const live = useRef(new LiveAnswer()).current;
  const abort = useRef<AbortController | null>(null);
  const list = useRef<HTMLDivElement>(null);

  // Follow the answer as it grows, unless the reader scrolled up to read.
  useEffect(() => {
    const follow = () => {
      const el = list.current;
      if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 120) el.scrollTop = el.scrollHeight;
    };
    follow();
    return live.subscribe(follow);
  }, [live, messages]);
  useEffect(() => () => abort.current?.abort(), []);

  const ask = useCallback(
    /** `prepare` runs once the turn shows as under way (its failure is the answer's error). */
    async (question: string, history: ChatMessage[], prepare?: () => Promise<void>) => {
      const user: ChatMessage = { id: newId(), role: 'user', text: question };
      const answerId = newId();
      setMessages([...history, user]);
      setBusy(true);
      live.reset();
      const controller = new AbortController();
      abort.current = controller;
      let records: StepRecord[] | undefined;
      const done = (extra: Partial<ChatMessage>) => setMessages([...history, user, { id: answerId, role: 'assistant', text: live.text, records, ...extra }]);
      try {
        await prepare?.();
        const res = await transport.send(
          { chatId, stream: true, detail: true, messages: [{ role: 'user', content: question }], variables, responseChatItemId: answerId },
          controller.signal,
        );
        await readChatStream(res, (e) => {
          if (e.type === 'answer') live.update({ append: e.text, step: '' });
          else if (e.type === 'status') live.update({ step: e.name });
          else if (e.type === 'responseData') records = e.records as StepRecord[];
        });
        done({});
      } catch (err) {
        if (controller.signal.aborted) done({ stopped: true });
        else done({ error: { message: (err as Error).message || String(err), requestId: err instanceof ChatStreamError ? err.requestId : null } });
      } finally {
        live.reset();
        abort.current = null;
        setBusy(false);
        onTurn?.();
      }
    },
    [transport, chatId, variables, live, onTurn],
  );

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    const question = draft.trim();
    if (!question || busy) return;
    setDraft('');
    void ask(question, messages);
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter sends; Shift+Enter is a new line; Enter that ends an IME composition (Chinese input) is not a send.
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) submit(e);
  };
  const regenerate = useCallback(() => {
    const at = messages.map((m) => m.role).lastIndexOf('user');
    if (at < 0 || busy) return;
    const answer = messages[at + 1];
    void ask(messages[at]!.text, messages.slice(0, at), async () => {
      if (!answer) return;
      // The stored turn goes, so that the chat's history does not hold the question twice.
      // The answer is stored under the id this page gave it (none when it was stopped or
      // failed: nothing to remove); its question, just before it, under the platform's.
      const stored = await transport.records(chatId);
      const i = stored.findIndex((m) => m.id === answer.id);
      if (i < 0) return;
      const turn = stored[i - 1]?.role === 'user' ? [stored[i - 1]!, stored[i]!] : [stored[i]!];
      for (const m of turn) await transport.removeItem(chatId, m.id);
    });
  }, [messages, busy, ask, transport, chatId]);
  const feedback = useCallback(
    async (m: ChatMessage, f: { good?: string; bad?: string }) => {
      await transport.feedback(chatId, m.id, f);
      setMessages((all) => all.map((x) => (x.id === m.id ? { ...x, feedback: f } : x)));
    },
    [transport, chatId],
  );
  // Only a stored answer has a trace: a stopped or failed one was never stored.
  const trace = useCallback((m: ChatMessage) => transport.modelCalls(chatId, m.id), [transport, chatId]);
  const lastAnswer = busy ? undefined : [...messages].reverse().find((m) => m.role === 'assistant');

  return (
    <section className={`chat-panel${compact ? ' compact' : ''}`}>
      {variableNames.length > 0 && (
        <details className="chat-variables card" open={!compact}>
          <summary>
            <span>{t('chat.variables')}</span>
          </summary>
          <div className="row">
            {variableNames.map((name) => (
              <label key={name} className="grow">
                <span>{name}</span>
                <input value={variables[name] ?? ''} onChange={(e) => setVariables({ ...variables, [name]: e.target.value })} />
              </label>
            ))}
          </div>
        </details>
      )}
      <div className="chat-messages" ref={list}>
        {messages.length === 0 && !busy && (
          <p className="muted chat-empty">
            <span>{t('chat.empty')}</span>
          </p>
        )}
        {/* Feedback is about a stored answer: none for a stopped or failed one. */}
        {messages.map((m) => (
          <Boundary key={m.id}>
            <MessageView message={m} onRegenerate={m === lastAnswer ? regenerate : undefined} onFeedback={m.role === 'assistant' && !m.error && !m.stopped ? feedback : undefined} onTrace={trace} />
          </Boundary>
        ))}
        {busy && <StreamingAnswer live={live} />}
      </div>
      <form className="chat-input" onSubmit={submit}>
        <textarea aria-label={t('chat.message')} placeholder={t('chat.message')} value={draft} onChange={(e) => setDraft(e.target.value)} onKeyDown={onKey} rows={compact ? 2 : 3} />
        {busy ? (
          <button type="button" className="danger" onClick={() => abort.current?.abort()}>
            <span>{t('chat.stop')}</span>
          </button>
        ) : (
          <button type="submit" disabled={!draft.trim()}>
            <span>{t('chat.send')}</span>
          </button>
        )}
      </form>
    </section>
  );
}
