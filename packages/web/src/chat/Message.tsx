// One message of a chat. A finished message is memoised: while an answer
// streams, only the streaming one renders again. An answer's markdown is put
// in the page as sanitised HTML, block by block (React owns each block's
// container, never the nodes inside it, so a page translator cannot confuse
// it; a streamed piece renders only the block it grows); its citation buttons
// open the quote they point at, on hover, focus or tap.
import DOMPurify from 'dompurify';
import { memo, useCallback, useEffect, useMemo, useRef, useState, type MouseEvent, type ReactNode } from 'react';
import type { GatewayCalls } from '../api';
import { useLang } from '../i18n';
import { Boundary, copyText } from '../ui';
import { markdownBlocks, markdownToHtml } from './markdown';
import { quotesOf, type ChatMessage, type Quote } from './messages-model';
import { QuotePopover } from './QuotePopover';
import { Steps } from './Steps';

/** How long a quote stays open after the pointer leaves, so that the pointer can cross to it (to scroll a long one). */
const CLOSE_DELAY_MS = 300;

/** One top-level block of an answer: rendered again only when its own source changes. */
const MarkdownBlock = memo(function MarkdownBlock({ source, quoteCount }: { source: string; quoteCount: number }) {
  const { t, lang } = useLang();
  const html = useMemo(
    () => DOMPurify.sanitize(markdownToHtml(source, quoteCount, (n) => t('chat.source', { n }))),
    // t changes with lang only
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [source, quoteCount, lang],
  );
  return <div className="md-block" dangerouslySetInnerHTML={{ __html: html }} />;
});

export function Markdown({ text, quotes }: { text: string; quotes: Quote[] }) {
  const blocks = useMemo(() => markdownBlocks(text), [text]);
  const [open, setOpen] = useState<{ n: number; cite: HTMLElement } | null>(null);
  const wrap = useRef<HTMLDivElement>(null);
  const popover = useRef<HTMLDivElement | null>(null);
  const closing = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const keep = () => clearTimeout(closing.current);
  const hide = useCallback(() => {
    clearTimeout(closing.current);
    setOpen(null);
  }, []);
  const hideSoon = () => {
    clearTimeout(closing.current);
    closing.current = setTimeout(hide, CLOSE_DELAY_MS);
  };
  const show = (e: MouseEvent | React.FocusEvent) => {
    const cite = (e.target as HTMLElement).closest?.('button.cite') as HTMLElement | null;
    if (!cite || !wrap.current?.contains(cite)) return;
    keep();
    setOpen((o) => (o?.cite === cite ? o : { n: Number(cite.dataset.cite), cite }));
  };
  const inside = (node: Node | null) => Boolean(node && (wrap.current?.contains(node) || popover.current?.contains(node)));
  // Closed when focus leaves the answer and its quote; a tap elsewhere and Escape close it wherever focus is.
  const blur = (e: React.FocusEvent) => {
    if (!inside(e.relatedTarget as Node | null)) hide();
  };
  useEffect(() => {
    if (!open) return;
    const down = (e: PointerEvent) => !inside(e.target as Node) && hide();
    const key = (e: KeyboardEvent) => e.key === 'Escape' && hide();
    document.addEventListener('pointerdown', down);
    document.addEventListener('keydown', key);
    return () => {
      document.removeEventListener('pointerdown', down);
      document.removeEventListener('keydown', key);
    };
  }, [open, hide]);
  useEffect(() => () => clearTimeout(closing.current), []);
  // A streamed piece renders its block anew: a citation replaced under an open quote closes it.
  useEffect(() => {
    if (open && !open.cite.isConnected) hide();
  }, [blocks, open, hide]);
  const quote = open ? quotes[open.n - 1] : undefined;
  // The popover is a React child of this wrap (in a portal): the pointer moving into it is no leaving.
  return (
    <div className="markdown-wrap" ref={wrap} onMouseOver={show} onFocus={show} onClick={show} onMouseLeave={hideSoon} onMouseEnter={keep} onBlur={blur}>
      <div className="markdown">
        {blocks.map((source, i) => (
          <MarkdownBlock key={i} source={source} quoteCount={quotes.length} />
        ))}
      </div>
      {open && quote && <QuotePopover n={open.n} quote={quote} cite={open.cite} popoverRef={popover} onMouseEnter={keep} />}
    </div>
  );
}

interface Actions {
  onRegenerate?: () => void;
  /** Reads the gateway's record of this stored answer's model calls. */
  onTrace?: (m: ChatMessage) => Promise<GatewayCalls>;
  onFeedback?: (m: ChatMessage, feedback: { good?: string; bad?: string }) => Promise<void>;
  /** What the page showing an answer adds under its actions (the chat log: its annotation, "Improve this answer"). */
  extra?: (m: ChatMessage) => ReactNode;
}

export const MessageView = memo(function MessageView({ message, onRegenerate, onFeedback, onTrace, extra }: { message: ChatMessage } & Actions) {
  const { t } = useLang();
  const [steps, setSteps] = useState(false);
  const [copied, setCopied] = useState(false);
  const quotes = useMemo(() => quotesOf(message.records), [message.records]);
  if (message.role === 'user')
    return (
      <div className="msg user">
        <div className="bubble">
          <span>{message.text}</span>
        </div>
      </div>
    );
  return (
    <div className="msg assistant" data-testid="answer">
      <div className="bubble">
        {(message.text || !message.error) && (
          <Boundary>
            <Markdown text={message.text} quotes={quotes} />
          </Boundary>
        )}
        {message.stopped && (
          <p className="muted">
            <span>{t('chat.stopped')}</span>
          </p>
        )}
        {message.running && (
          <p className="muted" role="status">
            <span className="typing">{t('chat.running')}</span>
          </p>
        )}
        {message.interrupted && (
          <p className="muted">
            <span>{t('chat.interrupted')}</span>
          </p>
        )}
        {message.error && (
          <p role="alert" className="error">
            <span>{message.error.message}</span>
            {message.error.requestId && <span className="muted">{` (${t('chat.requestId', { id: message.error.requestId })})`}</span>}
          </p>
        )}
      </div>
      <div className="msg-actions row">
        {message.text && (
          <button
            type="button"
            className="link"
            onClick={async () => {
              await copyText(message.text);
              setCopied(true);
              setTimeout(() => setCopied(false), 1500);
            }}
          >
            <span>{copied ? t('chat.copied') : t('chat.copy')}</span>
          </button>
        )}
        {onRegenerate && (
          <button type="button" className="link" onClick={onRegenerate}>
            <span>{t('chat.regenerate')}</span>
          </button>
        )}
        {message.records && message.records.length > 0 && (
          <button type="button" className="link" aria-expanded={steps} onClick={() => setSteps(!steps)}>
            <span>{t('chat.steps')}</span>
          </button>
        )}
        {onFeedback && <Feedback message={message} onFeedback={onFeedback} />}
      </div>
      {extra?.(message)}
      {steps && message.records && (
        <Boundary>
          <Steps records={message.records} loadCalls={onTrace && (() => onTrace(message))} />
        </Boundary>
      )}
    </div>
  );
});

function Feedback({ message, onFeedback }: { message: ChatMessage; onFeedback: NonNullable<Actions['onFeedback']> }) {
  const { t } = useLang();
  const [asking, setAsking] = useState(false);
  const [comment, setComment] = useState('');
  const [error, setError] = useState('');
  const given = message.feedback?.good ? 'good' : message.feedback?.bad ? 'bad' : null;
  const send = async (f: { good?: string; bad?: string }) => {
    setError('');
    try {
      await onFeedback(message, f);
      setAsking(false);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <>
      <button type="button" className="link" aria-pressed={given === 'good'} onClick={() => send(given === 'good' ? {} : { good: 'yes' })}>
        <span>{t('chat.good')}</span>
      </button>
      <button type="button" className="link" aria-pressed={given === 'bad'} onClick={() => (given === 'bad' ? send({}) : setAsking(true))}>
        <span>{t('chat.bad')}</span>
      </button>
      {asking && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            void send({ bad: comment.trim() || 'no' });
          }}
        >
          <input
            aria-label={t('chat.feedbackComment')}
            placeholder={t('chat.feedbackComment')}
            value={comment}
            onChange={(e) => setComment(e.target.value)}
            maxLength={1000}
          />
          <button type="submit">
            <span>{t('chat.feedbackSend')}</span>
          </button>
        </form>
      )}
      {error && (
        <span role="alert" className="error">
          {error}
        </span>
      )}
    </>
  );
}
