// The gateway's console: its own entry (console.html, served by the gateway at
// its root), on the same design system as the platform's app.
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ConsoleApp } from './console/ConsoleApp';
import { createQueryClient } from './query';
import { guardAgainstPageTranslators } from './translate-safe';
import './style.css';

guardAgainstPageTranslators();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={createQueryClient()}>
      <ConsoleApp />
    </QueryClientProvider>
  </StrictMode>,
);
