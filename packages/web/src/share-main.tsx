// The share page's own entry: it loads none of the signed-in app's pages.
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { SharePage } from './chat/SharePage';
import * as chatMessages from './chat/messages';
import { addMessages, browserStorage, setLang } from './i18n';
import * as coreMessages from './messages';
import { createQueryClient } from './query';
import { guardAgainstPageTranslators } from './translate-safe';
import './style.css';

// Its strings only: the shell's and the chat's.
addMessages(coreMessages, chatMessages);
langAsked();
guardAgainstPageTranslators();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={createQueryClient()}>
      <SharePage />
    </QueryClientProvider>
  </StrictMode>,
);

/**
 * The language the embedding page asks for (?lang=en|zh, the embed script's
 * data-lang), for this page load: the visitor's own saved choice is kept as
 * it was (the switch in the header still saves theirs).
 */
function langAsked(): void {
  const asked = new URLSearchParams(location.search).get('lang');
  if (asked !== 'en' && asked !== 'zh') return;
  const storage = browserStorage();
  const saved = storage?.getItem('kbchat.lang') ?? null;
  setLang(asked);
  try {
    if (saved === null) storage?.removeItem('kbchat.lang');
    else storage?.setItem('kbchat.lang', saved);
  } catch {
    // Storage refused or full: the visitor's choice stays as it was stored.
  }
}
