// A Procfile (`name: command` per line): each process a `steps` service; `web` gets a port (its $PORT) and the dev
// URL; `release` (run before each deploy) becomes a prepare step.
import { addService, type Draft } from './draft.ts';

/** The port a Procfile's web process is given in $PORT (svc sets PORT to a service's first port). */
export const PROCFILE_WEB_PORT = 5000;

export function readProcfile(text: string, file: string, draft: Draft): void {
  draft.sources.push(file);
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const match = /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line.trim());
    if (!match) {
      draft.unmapped.push(`${file} line ${index + 1}: "${line.trim()}" is not "name: command"`);
      continue;
    }
    const [, name, command] = match;
    if (name === 'release') {
      draft.prepare.push({ name: 'release', run: command });
      continue;
    }
    const web = name === 'web';
    addService(draft, name, { type: 'steps', steps: [{ run: command }], ...(web ? { ports: [{ port: PROCFILE_WEB_PORT }] } : {}) }, `${file} process "${name}"`);
    if (web) draft.assumptions.push(`"web" listens on $PORT, which svc sets to ${PROCFILE_WEB_PORT}, its first port`);
  }
}
