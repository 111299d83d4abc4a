// The quote a citation points at, in a popover placed against the viewport
// (Floating UI, fixed, in a portal on document.body): no scroll area of the
// chat, the test pane or the page clips it. It opens below the citation,
// flips above where there is no room, shifts sideways to stay on screen, is
// never taller than the room left (its quote then scrolls inside it), follows
// the citation as the chat scrolls, and hides while the citation is
// scrolled out of sight.
import { autoUpdate, flip, hide, offset, shift, size, useFloating } from '@floating-ui/react-dom';
import type { MouseEventHandler, RefObject } from 'react';
import { createPortal } from 'react-dom';
import { useLang } from '../i18n';
import { SourcePages } from '../ui';
import type { Quote } from './messages-model';
import { ScoreList } from './Steps';

/** The least room kept between the popover and the viewport's edges, in px. */
const EDGE = 8;

export function QuotePopover({
  n,
  quote,
  cite,
  popoverRef,
  onMouseEnter,
}: {
  n: number;
  quote: Quote;
  /** The citation button it belongs to. */
  cite: HTMLElement;
  /** Given the popover's element (to tell focus and taps inside it from those outside). */
  popoverRef: RefObject<HTMLDivElement | null>;
  onMouseEnter: MouseEventHandler;
}) {
  const { t } = useLang();
  const { refs, floatingStyles, middlewareData } = useFloating({
    strategy: 'fixed',
    placement: 'bottom-start',
    elements: { reference: cite },
    whileElementsMounted: autoUpdate,
    middleware: [
      offset(4),
      flip({ padding: EDGE }),
      shift({ padding: EDGE }),
      size({
        padding: EDGE,
        apply({ availableWidth, availableHeight, elements }) {
          elements.floating.style.maxWidth = `${Math.floor(availableWidth)}px`;
          elements.floating.style.maxHeight = `${Math.floor(availableHeight)}px`;
        },
      }),
      hide(),
    ],
  });
  const setRef = (el: HTMLDivElement | null) => {
    refs.setFloating(el);
    popoverRef.current = el;
  };
  const hidden = middlewareData.hide?.referenceHidden;
  return createPortal(
    <div
      ref={setRef}
      className="cite-popover card"
      role="dialog"
      aria-label={t('chat.source', { n })}
      style={{ ...floatingStyles, visibility: hidden ? 'hidden' : undefined }}
      onMouseEnter={onMouseEnter}
    >
      <div className="row">
        <strong>{`[${n}]`}</strong>
        <span className="muted">
          <span>{quote.sourceName}</span>
          <SourcePages pages={quote.pages} rows={quote.rows} />
        </span>
      </div>
      <ScoreList score={quote.score} />
      <p className="quote-text">
        <span>{quote.q}</span>
      </p>
      {quote.a && (
        <p className="quote-text muted">
          <span>{quote.a}</span>
        </p>
      )}
    </div>,
    document.body,
  );
}
