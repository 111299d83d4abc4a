// The embed script (GET /embed.js, built alone into dist/embed.js as one
// classic script): a share link's chat in a corner bubble on any site,
//   <script src="https://<platform>/embed.js" data-share-id="<shareId>" defer></script>
// It runs on pages it does not know, so it touches nothing of theirs: one
// element whose shadow root holds its markup and its styles, no global CSS,
// and one global, window.kbchat (open, close, toggle). README.md beside it
// lists the attributes.
import { bubbleUi, type Labels } from './ui';

interface KbchatApi {
  open(): void;
  close(): void;
  toggle(): void;
}
type Host = Window & { kbchat?: KbchatApi };

const LABELS: Record<'en' | 'zh', Labels> = {
  en: { open: 'Open chat', close: 'Close chat', chat: 'Chat' },
  zh: { open: '打开对话', close: '关闭对话', chat: '对话' },
};

const warn = (why: string) => console.warn(`kbchat embed: ${why}`);

/** What the share link's init says, as far as this page may read it. */
interface LinkInfo {
  name: string;
}

/** Whether `allowed` (an origin as the link stores it) names this page's origin (a default port written out or not). */
function sameOrigin(allowed: string, origin: string): boolean {
  try {
    return new URL(allowed).origin === origin;
  } catch {
    return false;
  }
}

/**
 * The link's init, read before the bubble shows: a link that cannot be
 * opened, or whose allowed origins leave this page out, shows nothing (and
 * says why in the console). The platform answers it to any origin; where
 * its answer cannot be read at all (no network, a proxy that drops the CORS
 * header) the bubble shows, and the share page's own frame-ancestors decides
 * whether it opens here.
 */
async function linkInfo(base: URL, shareId: string, authToken: string | undefined): Promise<LinkInfo | undefined> {
  const url = new URL('api/support/outLink/init', base);
  url.searchParams.set('shareId', shareId);
  if (authToken) url.searchParams.set('authToken', authToken);
  let res: Response;
  try {
    res = await fetch(url, { credentials: 'omit' });
  } catch {
    console.info(`kbchat embed: could not read the share link's settings from ${base.origin}; its page decides where it may be shown`);
    return { name: '' };
  }
  const body = (await res.json().catch(() => undefined)) as
    { code?: number; message?: string; data?: { app?: { name?: string }; allowedOrigins?: string[] } } | undefined;
  if (!res.ok || !body?.data) {
    warn(`the share link cannot be opened (${res.status}): ${body?.message ?? res.statusText}`);
    return undefined;
  }
  const origins = body.data.allowedOrigins ?? [];
  if (origins.length && !origins.some((o) => sameOrigin(o, location.origin))) {
    warn(`this page's origin (${location.origin}) is not among the share link's allowed origins (${origins.join(', ')}), so no chat is shown here`);
    return undefined;
  }
  return { name: body.data.app?.name ?? '' };
}

/** The share page's address: the platform's (where this script came from), with the link and the tag's options. */
function pageUrl(base: URL, shareId: string, authToken: string | undefined, lang: string | undefined): string {
  const url = new URL('chat/share', base);
  url.searchParams.set('shareId', shareId);
  if (authToken) url.searchParams.set('authToken', authToken);
  if (lang) url.searchParams.set('lang', lang);
  return url.href;
}

function whenBodyReady(run: () => void): void {
  if (document.body) run();
  else document.addEventListener('DOMContentLoaded', run, { once: true });
}

function start(): void {
  const w = window as Host;
  // A second tag (or a second copy of the script) finds the first's bubble and adds none.
  if (w.kbchat) return;
  const script = (document.currentScript as HTMLScriptElement | null) ?? document.querySelector<HTMLScriptElement>('script[data-share-id]');
  const d = script?.dataset ?? {};
  const shareId = d.shareId?.trim();
  if (!script?.src || !shareId) return warn('its <script> tag has no data-share-id (or no src)');
  // The platform's root, from this script's own address (under a proxy's path prefix too).
  const base = new URL('.', script.src);
  const explicitLang = d.lang === 'zh' || d.lang === 'en' ? d.lang : undefined;
  const lang = explicitLang ?? (document.documentElement.lang.toLowerCase().startsWith('zh') ? 'zh' : 'en');
  const color = d.color && typeof CSS !== 'undefined' && CSS.supports('color', d.color) ? d.color : undefined;
  if (d.color && !color) warn(`data-color "${d.color}" is not a CSS color; the default is used`);

  // Calls made before the link is checked are kept: the last says whether it opens.
  let wanted = d.open === 'true';
  let ui: ReturnType<typeof bubbleUi> | undefined;
  w.kbchat = {
    open: () => (ui ? ui.setOpen(true, true) : (wanted = true)),
    close: () => (ui ? ui.setOpen(false, ui.hasFocus()) : (wanted = false)),
    toggle: () => (ui ? ui.setOpen(!ui.isOpen(), ui.isOpen() ? ui.hasFocus() : true) : (wanted = !wanted)),
  };
  void linkInfo(base, shareId, d.authToken).then((info) => {
    if (!info) return;
    whenBodyReady(() => {
      ui = bubbleUi({
        labels: LABELS[lang],
        title: info.name,
        src: pageUrl(base, shareId, d.authToken, explicitLang),
        left: d.position === 'left',
        color,
      });
      // Opened at load (data-open, or an early open()): focus stays where the visitor has it.
      if (wanted) ui.setOpen(true, false);
    });
  });
}

start();
