// The share page's own entry: it loads none of the signed-in app's pages.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { SharePage } from './chat/SharePage';
import * as chatMessages from './chat/messages';
import { addMessages } from './i18n';
import * as coreMessages from './messages';
import { guardAgainstPageTranslators } from './translate-safe';
import './style.css';

// Its strings only: the shell's and the chat's.
addMessages(coreMessages, chatMessages);
guardAgainstPageTranslators();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SharePage />
  </StrictMode>,
);
