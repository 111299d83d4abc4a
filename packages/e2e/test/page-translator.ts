// What Chrome's page translator does to a page, for the translation tests: each
// text node is taken out and replaced by <font><font>its text</font></font>,
// now and whenever new text appears (Chrome also translates added text, a
// moment later). The "translation" marks the text with a prefix, so that a
// test can see that it happened.
import type { Page } from 'playwright-core';

export const TRANSLATED_MARK = '⟦t⟧';

function translatorScript(mark: string): void {
  const skip = new Set(['SCRIPT', 'STYLE', 'TEXTAREA', 'INPUT', 'CODE', 'PRE', 'NOSCRIPT']);
  const translate = (root: Node) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const texts: Text[] = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const t = n as Text;
      const parent = t.parentElement;
      if (!parent || skip.has(parent.tagName) || parent.closest('font[data-translated]') || !t.data.trim()) continue;
      texts.push(t);
    }
    for (const t of texts) {
      const outer = document.createElement('font');
      outer.setAttribute('data-translated', '');
      outer.style.verticalAlign = 'inherit';
      const inner = document.createElement('font');
      inner.style.verticalAlign = 'inherit';
      inner.textContent = mark + t.data;
      outer.appendChild(inner);
      t.parentNode!.replaceChild(outer, t);
    }
  };
  let pending = false;
  const schedule = () => {
    if (pending) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      translate(document.body);
    }, 30);
  };
  const start = () => {
    translate(document.body);
    new MutationObserver(schedule).observe(document.body, { childList: true, subtree: true, characterData: true });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
}

/** Every page opened afterwards in this page's context is "translated" as it loads. */
export async function translateLikeChrome(page: Page): Promise<void> {
  await page.addInitScript(translatorScript, TRANSLATED_MARK);
}
