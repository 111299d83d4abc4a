// One conversation: messages, the streamed answer, the input. Finished
// messages are memoised and the streaming answer lives in its own small
// store, so a token re-renders only that answer, however long the chat.
import { useCallback, useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore, type FormEvent, type KeyboardEvent, type MouseEvent } from 'react';
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
  /** A question was taken by the platform (stored, with its chat): the chat can be named in the address and listed. */
  onSent?: () => void;
  /** After each turn (the history list may have a new or renamed chat). */
  onTurn?: () => void;
  compact?: boolean;
}

/** A click on Stop this soon after Send, or the second click of a double click, belongs to the Send. */
const SAME_GESTURE_MS = 600;
/** How often a reopened chat whose answer is still being made reads it again. */
const RUNNING_POLL_MS = 1500;

export function Conversation({ transport, chatId, initial, variableNames = [], initialVariables, onSent, onTurn, compact }: ConversationProps) {
  const { t } = useLang();
  const [messages, setMessages] = useState<ChatMessage[]>(initial ?? []);
  const [draft, setDraft] = useState('');
  const [busy, setBusy] = useState(false);
  const [variables, setVariables] = useState<Record<string, string>>(initialVariables ?? {});
  const live = useRef(new LiveAnswer()).current;
  // The page's callbacks as of its last render (they are new functions on every render).
  const callbacks = useRef({ onSent, onTurn });
  callbacks.current = { onSent, onTurn };
  /** The turn this page is reading: its request, its answer's id, and whether Stop was asked. */
  const turn = useRef<{ controller: AbortController; answerId: string; stopAsked: boolean } | null>(null);
  /** Send was just clicked: Stop takes its place, and a click on it this soon belongs to the Send (it shows disabled meanwhile). */
  const [justClicked, setJustClicked] = useState(false);
  useEffect(() => {
    if (!justClicked) return;
    const timer = setTimeout(() => setJustClicked(false), SAME_GESTURE_MS);
    return () => clearTimeout(timer);
  }, [justClicked]);
  const list = useRef<HTMLDivElement>(null);
  /** The reader is at the end of the chat: new messages and a growing answer keep it there. */
  const pinned = useRef(true);
  const form = useRef<HTMLFormElement>(null);
  /** A question was just sent: the page, too, scrolls as little as it must to show the chat's end (where its answer comes). */
  const reveal = useRef(false);
  const toEnd = useCallback(() => {
    const el = list.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, []);
  // Follow the chat as it grows, unless the reader scrolled up to read (a question sent brings the view back).
  useLayoutEffect(() => {
    const revealing = reveal.current;
    reveal.current = false;
    const follow = () => {
      toEnd();
      if (revealing) form.current?.scrollIntoView({ block: 'nearest' });
    };
    follow();
    // Messages are laid out late when they come into view (content-visibility): follow again once they have their size.
    let frame = requestAnimationFrame(() => {
      follow();
      frame = requestAnimationFrame(follow);
    });
    return () => cancelAnimationFrame(frame);
  }, [messages, busy, toEnd]);
  useEffect(() => live.subscribe(toEnd), [live, toEnd]);
  const onScroll = () => {
    const el = list.current;
    if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };
  useEffect(() => () => turn.current?.controller.abort(), []);

  // A reopened chat whose answer is still being made (the page was reloaded, or another tab asked): read it until it ends.
  const runningStored = !busy && messages.some((m) => m.running);
  useEffect(() => {
    if (!runningStored) return;
    const timer = setInterval(async () => {
      try {
        const fresh = await transport.records(chatId);
        setMessages(fresh);
        if (!fresh.some((m) => m.running)) callbacks.current.onTurn?.();
      } catch {
        // Read again at the next tick.
      }
    }, RUNNING_POLL_MS);
    return () => clearInterval(timer);
  }, [runningStored, transport, chatId]);

  const ask = useCallback(
    /** `prepare` runs once the turn shows as under way (its failure is the answer's error). */
    async (question: string, history: ChatMessage[], prepare?: () => Promise<void>) => {
      const user: ChatMessage = { id: newId(), role: 'user', text: question };
      const answerId = newId();
      const controller = new AbortController();
      const current = { controller, answerId, stopAsked: false };
      turn.current = current;
      pinned.current = true;
      reveal.current = true;
      setMessages([...history, user]);
      setBusy(true);
      live.reset();
      let records: StepRecord[] | undefined;
      const done = (extra: Partial<ChatMessage>) => setMessages([...history, user, { id: answerId, role: 'assistant', text: live.text, records, ...extra }]);
      try {
        await prepare?.();
        const res = await transport.send(
          { chatId, stream: true, detail: true, messages: [{ role: 'user', content: question }], variables, responseChatItemId: answerId },
          controller.signal,
        );
        if (res.ok) callbacks.current.onSent?.();
        await readChatStream(res, (e) => {
          if (e.type === 'answer') live.update({ append: e.text, step: '' });
          else if (e.type === 'status') live.update({ step: e.name });
          else if (e.type === 'responseData') records = e.records as StepRecord[];
        });
        // A stopped answer's stream ends normally, with what was made.
        done(current.stopAsked ? { stopped: true } : {});
      } catch (err) {
        if (current.stopAsked || controller.signal.aborted) done({ stopped: true });
        else done({ error: { message: (err as Error).message || String(err), requestId: err instanceof ChatStreamError ? err.requestId : null } });
      } finally {
        live.reset();
        turn.current = null;
        setBusy(false);
        callbacks.current.onTurn?.();
      }
    },
    [transport, chatId, variables, live],
  );

  /**
   * Stop: the platform is asked to stop the answer (it keeps what was made,
   * as stopped, with its question), then the stream is let go. Only letting
   * go would not stop it: the platform finishes the answer of a client that
   * leaves, so that a reload loses nothing.
   */
  const stop = useCallback(async () => {
    const current = turn.current;
    if (current) {
      if (current.stopAsked) return;
      current.stopAsked = true;
      await transport.stop(chatId, current.answerId).catch(() => {});
      current.controller.abort();
      return;
    }
    const running = messages.find((m) => m.running);
    if (!running) return;
    await transport.stop(chatId, running.id).catch(() => {});
    setMessages(await transport.records(chatId));
  }, [transport, chatId, messages]);

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    const question = draft.trim();
    // turn.current is set at once: a second Enter or click before the page re-renders sends nothing.
    if (!question || busy || turn.current || runningStored) return;
    // Sent by a click on Send (not by Enter): the click's own second half must not land on Stop.
    if ((e?.nativeEvent as SubmitEvent | undefined)?.submitter) setJustClicked(true);
    setDraft('');
    void ask(question, messages);
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter sends; Shift+Enter is a new line; Enter that ends an IME composition (Chinese input) is not a send.
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) submit(e);
  };
  const onStop = (e: MouseEvent<HTMLButtonElement>) => {
    // Stop stands where Send was: the second click of a double click on Send, or one right after it, is not a Stop.
    if (e.detail > 1 || justClicked) return;
    void stop();
  };
  const regenerate = useCallback(() => {
    const at = messages.map((m) => m.role).lastIndexOf('user');
    if (at < 0 || busy || turn.current) return;
    const answer = messages[at + 1];
    void ask(messages[at]!.text, messages.slice(0, at), async () => {
      if (!answer) return;
      // The stored turn goes, so that the chat's history does not hold the question twice.
      // The answer is stored under the id this page gave it; its question, just before it, under the platform's.
      const stored = await transport.records(chatId);
      const i = stored.findIndex((m) => m.id === answer.id);
      if (i < 0) return;
      const pair = stored[i - 1]?.role === 'user' ? [stored[i - 1]!, stored[i]!] : [stored[i]!];
      for (const m of pair) await transport.removeItem(chatId, m.id);
    });
  }, [messages, busy, ask, transport, chatId]);
  const feedback = useCallback(
    async (m: ChatMessage, f: { good?: string; bad?: string }) => {
      await transport.feedback(chatId, m.id, f);
      setMessages((all) => all.map((x) => (x.id === m.id ? { ...x, feedback: f } : x)));
    },
    [transport, chatId],
  );
  const trace = useCallback((m: ChatMessage) => transport.modelCalls(chatId, m.id), [transport, chatId]);
  const working = busy || runningStored;
  const lastAnswer = working ? undefined : [...messages].reverse().find((m) => m.role === 'assistant');

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
      <div className="chat-messages" ref={list} onScroll={onScroll}>
        {messages.length === 0 && !busy && (
          <p className="muted chat-empty">
            <span>{t('chat.empty')}</span>
          </p>
        )}
        {/* Feedback is about a finished answer: none for a stopped, failed or unfinished one. */}
        {messages.map((m) => (
          <Boundary key={m.id}>
            <MessageView
              message={m}
              onRegenerate={m === lastAnswer ? regenerate : undefined}
              onFeedback={m.role === 'assistant' && !m.error && !m.stopped && !m.running && !m.interrupted ? feedback : undefined}
              onTrace={trace}
            />
          </Boundary>
        ))}
        {busy && <StreamingAnswer live={live} />}
      </div>
      <form className="chat-input" onSubmit={submit} ref={form}>
        <textarea
          aria-label={t('chat.message')}
          placeholder={t('chat.message')}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKey}
          rows={compact ? 2 : 3}
        />
        {working ? (
          <button key="stop" type="button" className="danger" onClick={onStop} disabled={justClicked}>
            <span>{t('chat.stop')}</span>
          </button>
        ) : (
          <button key="send" type="submit" disabled={!draft.trim()}>
            <span>{t('chat.send')}</span>
          </button>
        )}
      </form>
    </section>
  );
}
