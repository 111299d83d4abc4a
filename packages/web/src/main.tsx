import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import * as appsMessages from './apps/messages';
import * as chatMessages from './chat/messages';
import * as datasetsMessages from './datasets/messages';
import { addMessages } from './i18n';
import * as coreMessages from './messages';
import * as settingsMessages from './settings/messages';
import { guardAgainstPageTranslators } from './translate-safe';
import './style.css';

// The platform app's areas' strings, none of the gateway console's.
addMessages(coreMessages, datasetsMessages, appsMessages, chatMessages, settingsMessages);
guardAgainstPageTranslators();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
