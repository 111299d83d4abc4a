import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { guardAgainstPageTranslators } from './translate-safe';
import './style.css';

guardAgainstPageTranslators();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
