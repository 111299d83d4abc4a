import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import * as appsMessages from './apps/messages';
import * as chatMessages from './chat/messages';
import * as datasetsMessages from './datasets/messages';
import { addMessages } from './i18n';
import * as coreMessages from './messages';
import * as settingsMessages from './settings/messages';
import * as toolsMessages from './tools/messages';
import { createQueryClient } from './query';
import { guardAgainstPageTranslators } from './translate-safe';
import './style.css';

// The platform app's areas' strings, none of the gateway console's.
addMessages(coreMessages, datasetsMessages, appsMessages, toolsMessages, chatMessages, settingsMessages);
guardAgainstPageTranslators();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={createQueryClient()}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
