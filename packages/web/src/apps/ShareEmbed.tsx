// "Embed on your site" for one share link: the embed script's tag (a chat
// bubble in a corner) and an iframe of the share page, each in a read-only
// box with a Copy button, and a live preview of the share page (it allows
// this platform in its frame-ancestors, so it frames here whatever sites the
// link allows).
import type { PublicOutLink } from '@kbchat/contracts';
import { useEffect, useRef, useState } from 'react';
import { useLang } from '../i18n';
import { iframeSnippet, scriptSnippet, sharePageUrl } from './share-form';

export function ShareEmbed({ link, appName }: { link: PublicOutLink; appName: string }) {
  const { t } = useLang();
  const origin = location.origin;
  return (
    <div className="stack share-embed">
      <p className="ap-note muted">
        <span>{link.allowedOrigins.length ? t('share.embed.onlySites', { origins: link.allowedOrigins.join(', ') }) : t('share.embed.anySite')}</span>
      </p>
      {link.limit.hookUrl && (
        <p className="notice warn ap-note">
          <span>{t('share.embed.hook')}</span>
        </p>
      )}
      <Snippet
        title={t('share.embed.script')}
        hint={t('share.embed.scriptHint')}
        copyLabel={t('share.embed.copyScript')}
        code={scriptSnippet(origin, link.shareId)}
      />
      <Snippet
        title={t('share.embed.iframe')}
        hint={t('share.embed.iframeHint')}
        copyLabel={t('share.embed.copyIframe')}
        code={iframeSnippet(origin, link.shareId, appName)}
      />
      <section className="stack share-preview" aria-label={t('share.embed.preview')}>
        <h3>
          <span>{t('share.embed.preview')}</span>
        </h3>
        <iframe
          src={sharePageUrl(origin, link.shareId)}
          title={t('share.embed.previewTitle', { name: link.name })}
          className="share-preview-frame"
          allow="clipboard-write"
        />
      </section>
    </div>
  );
}

/** A snippet in a read-only box; Copy puts it on the clipboard, or (where the page may not) selects it for the reader to copy. */
function Snippet({ title, hint, code, copyLabel }: { title: string; hint: string; code: string; copyLabel: string }) {
  const { t } = useLang();
  const box = useRef<HTMLTextAreaElement>(null);
  const [done, setDone] = useState<'' | 'copied' | 'selected'>('');
  useEffect(() => {
    if (!done) return;
    const timer = setTimeout(() => setDone(''), 4000);
    return () => clearTimeout(timer);
  }, [done]);
  async function copy() {
    try {
      await navigator.clipboard.writeText(code);
      setDone('copied');
    } catch {
      // No clipboard here (not https, or refused): the text selected, for Ctrl+C.
      box.current?.focus();
      box.current?.select();
      setDone('selected');
    }
  }
  return (
    <div className="stack share-snippet" role="group" aria-label={title}>
      <div className="row">
        <strong className="grow">
          <span>{title}</span>
        </strong>
        <span role="status" className={done === 'copied' ? 'share-copied' : 'muted ap-hint'}>
          {done && <span>{done === 'copied' ? t('common.copied') : t('share.embed.selected')}</span>}
        </span>
        <button type="button" className="secondary" aria-label={copyLabel} onClick={() => void copy()}>
          <span>{t('common.copy')}</span>
        </button>
      </div>
      <textarea
        ref={box}
        readOnly
        value={code}
        aria-label={title}
        className="ap-code share-code"
        rows={code.length > 160 ? 3 : 2}
        spellCheck={false}
        onFocus={(e) => e.currentTarget.select()}
      />
      <small className="muted ap-hint">
        <span>{hint}</span>
      </small>
    </div>
  );
}
