// The bubble and its panel, in a shadow root: the host page's styles do not
// reach in (the host resets what it would inherit) and these do not reach out.
// The share page's iframe is made on the first open, so a page that never
// opens the chat loads nothing of it.

export interface Labels {
  open: string;
  close: string;
  /** The panel's name when the app's is not known. */
  chat: string;
}

export interface BubbleOptions {
  labels: Labels;
  /** The app's name ('' when it could not be read). */
  title: string;
  /** The share page's address. */
  src: string;
  left: boolean;
  /** The button's background (a checked CSS color), or the default. */
  color?: string;
}

const CSS = `
:host{all:initial}
.bubble{position:fixed;bottom:20px;right:20px;z-index:2147483647;box-sizing:border-box;width:56px;height:56px;margin:0;padding:0;border:0;border-radius:50%;
background:#2f6fec;color:#fff;cursor:pointer;display:flex;align-items:center;justify-content:center;box-shadow:0 4px 14px rgba(0,0,0,.28)}
.bubble:hover{filter:brightness(1.08)}
.bubble:focus-visible{outline:3px solid #111;outline-offset:3px}
.bubble svg{width:28px;height:28px;fill:currentColor;pointer-events:none}
.panel{position:fixed;bottom:88px;right:20px;z-index:2147483647;box-sizing:border-box;width:min(400px,calc(100vw - 40px));height:min(640px,calc(100vh - 108px));
border-radius:12px;overflow:hidden;background:#fff;box-shadow:0 8px 32px rgba(0,0,0,.28)}
.left{left:20px;right:auto}
.panel[hidden]{display:none}
iframe{display:block;width:100%;height:100%;border:0}
@media (max-width:480px){.panel{left:8px;right:8px;width:auto;bottom:84px;height:calc(100vh - 96px)}}
@media (prefers-color-scheme:dark){.panel{background:#161618}.bubble:focus-visible{outline-color:#fff}}
`;

// A speech bubble, and a cross for close.
const CHAT_ICON = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 5a2 2 0 0 1 2-2h12a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4z"/></svg>';
const CLOSE_ICON =
  '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6 6l12 12M18 6 6 18" fill="none" stroke="currentColor" stroke-width="2.5" stroke-linecap="round"/></svg>';

export function bubbleUi(o: BubbleOptions) {
  const host = document.createElement('kbchat-embed');
  const root = host.attachShadow({ mode: 'open' });
  root.innerHTML = `<style>${CSS}</style><div class="panel" id="kbchat-panel" role="dialog" hidden></div><button type="button" class="bubble" aria-controls="kbchat-panel"></button>`;
  const panel = root.querySelector<HTMLDivElement>('.panel')!;
  const button = root.querySelector<HTMLButtonElement>('.bubble')!;
  const name = o.title || o.labels.chat;
  panel.setAttribute('aria-label', name);
  if (o.left) {
    panel.classList.add('left');
    button.classList.add('left');
  }
  if (o.color) button.style.background = o.color;
  let frame: HTMLIFrameElement | undefined;
  let open = false;

  const render = () => {
    button.setAttribute('aria-label', open ? o.labels.close : o.labels.open);
    button.setAttribute('aria-expanded', String(open));
    button.innerHTML = open ? CLOSE_ICON : CHAT_ICON;
    panel.hidden = !open;
  };

  /** `focus`: move focus into the panel when it opens, and back to the button when it closes. */
  const setOpen = (next: boolean, focus: boolean) => {
    if (next && !frame) {
      frame = document.createElement('iframe');
      frame.title = name;
      frame.src = o.src;
      frame.allow = 'clipboard-write';
      panel.append(frame);
    }
    open = next;
    render();
    if (focus) (open ? frame! : button).focus();
  };
  /** Whether the focus is on the bubble or in its panel (a programmatic close then gives it back to the button). */
  const hasFocus = () => document.activeElement === host;

  button.addEventListener('click', () => setOpen(!open, true));
  // Escape on the host page (the iframe's own keys stay in its document, which is another origin's).
  window.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && open) setOpen(false, true);
  });
  render();
  document.body.append(host);
  return { setOpen, isOpen: () => open, hasFocus };
}
