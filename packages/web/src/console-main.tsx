// The gateway's console: its own entry (console.html, served by the gateway at
// its root), on the same design system as the platform's app.
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ConsoleApp } from './console/ConsoleApp';
import * as channelsMessages from './console/channels/messages';
import * as dashboardMessages from './console/dashboard/messages';
import * as groupsMessages from './console/groups/messages';
import * as logsMessages from './console/logs/messages';
import * as consoleMessages from './console/messages';
import * as pricesMessages from './console/prices/messages';
import * as limitsMessages from './console/limits/messages';
import * as tokensMessages from './console/tokens/messages';
import * as usersMessages from './console/users/messages';
import { addMessages } from './i18n';
import * as coreMessages from './messages';
import { createQueryClient } from './query';
import { guardAgainstPageTranslators } from './translate-safe';
import './style.css';

// The console's strings, none of the platform app's.
addMessages(
  coreMessages,
  consoleMessages,
  dashboardMessages,
  channelsMessages,
  usersMessages,
  tokensMessages,
  logsMessages,
  pricesMessages,
  limitsMessages,
  groupsMessages,
);
guardAgainstPageTranslators();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={createQueryClient()}>
      <ConsoleApp />
    </QueryClientProvider>
  </StrictMode>,
);
