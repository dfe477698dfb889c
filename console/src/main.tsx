// Entry of the console bundle (index.html loads it as a module; the server's CSP allows no inline script).
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import './styles.css';
import { explainFieldErrors } from './validation.ts';

explainFieldErrors(document);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
