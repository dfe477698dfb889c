// package.json: installing dependencies (by the lock file present) and `build` -> prepare, `test` -> test, and when
// no other file says what runs, `dev` or `start` -> a `web` service on $PORT.
import { addService, type Draft } from './draft.ts';

/** The port assumed for a Node app that reads $PORT (svc sets PORT to a service's first port). */
export const NODE_APP_PORT = 3000;

const npmDefaultTest = /no test specified/;

export function readNodePackage(text: string, file: string, files: Set<string>, draft: Draft, withService: boolean): void {
  const pkg = JSON.parse(text) as { scripts?: Record<string, string>; main?: string };
  draft.sources.push(file);
  const scripts = pkg.scripts ?? {};
  const tool = files.has('pnpm-lock.yaml') ? 'pnpm' : files.has('yarn.lock') ? 'yarn' : 'npm';
  const install = { pnpm: 'pnpm install --frozen-lockfile', yarn: 'yarn install --frozen-lockfile', npm: files.has('package-lock.json') ? 'npm ci' : 'npm install' }[tool];
  // a devcontainer's or Gitpod's own install command wins
  if (!draft.prepare.some((step) => /\b(npm (ci|install|i)|yarn|pnpm (install|i))\b/.test(step.run))) draft.prepare.push({ name: 'install dependencies', run: install });
  if (scripts.build) draft.prepare.push({ name: 'build', run: `${tool} run build` });
  if (scripts.test && !npmDefaultTest.test(scripts.test)) draft.test.push({ name: 'test', run: `${tool} test` });
  if (!withService) return;
  const script = scripts.dev ? 'dev' : scripts.start ? 'start' : undefined;
  const run = script ? `${tool} run ${script}` : files.has('server.js') ? 'node server.js' : pkg.main ? `node ${pkg.main}` : undefined;
  if (!run) {
    draft.unmapped.push(`${file}: no dev or start script, server.js or main: add the service that runs the app`);
    return;
  }
  addService(draft, 'web', { type: 'steps', steps: [{ run }], ports: [{ port: NODE_APP_PORT }] }, `${file} (${script ? `script "${script}"` : run})`);
  draft.assumptions.push(`"web" listens on $PORT, which svc sets to ${NODE_APP_PORT}, its first port; change the port if the app uses another`);
}
