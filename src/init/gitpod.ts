// .gitpod.yml: tasks' `before` and `init` -> prepare, their `command` -> `steps` services, `ports` -> ports of the
// service that serves them (the only command task, else the first), public when `visibility: public`.
import { parse as parseYaml } from 'yaml';
import { addService, type Draft, type DraftPort } from './draft.ts';

interface GitpodTask {
  name?: string;
  before?: string;
  init?: string;
  command?: string;
}

const handled = new Set(['tasks', 'ports', 'image']);

export function readGitpod(text: string, file: string, draft: Draft): void {
  const config = (parseYaml(text) ?? {}) as { tasks?: GitpodTask[]; ports?: Array<{ port: number | string; visibility?: string; name?: string }>; image?: unknown };
  draft.sources.push(file);
  const servers: string[] = [];
  const commands = new Map<string, string>();
  for (const [index, task] of (config.tasks ?? []).entries()) {
    const label = task.name ?? `task ${index + 1}`;
    // `before` sets up each of the task's shells (exports, PATH): it goes in front of the task's init and command
    const before = task.before ? `${task.before.trimEnd()}\n` : '';
    if (task.init) draft.prepare.push({ name: `${label}: init`.slice(0, 100), run: `${before}${task.init.trimEnd()}` });
    else if (task.before) draft.unmapped.push(`${file} task "${label}": before without init or command`);
    if (task.command) {
      const name = addService(draft, task.name ?? (index === 0 ? 'app' : `task-${index + 1}`), { type: 'steps', steps: [{ run: `${before}${task.command.trimEnd()}` }] }, `${file} task "${label}"`);
      servers.push(name);
      commands.set(name, task.command);
    }
  }
  for (const entry of config.ports ?? []) {
    const port = Number(entry.port);
    if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) {
      draft.unmapped.push(`${file}: port ${entry.port} (ranges are not mapped)`);
      continue;
    }
    if (servers.length === 0) {
      draft.unmapped.push(`${file}: port ${port} (no task command serves it)`);
      continue;
    }
    // the task whose command names the port serves it; else the first task, said as an assumption
    const named = servers.find((name) => new RegExp(`\\b${port}\\b`).test(commands.get(name)!));
    if (!named && servers.length > 1) draft.assumptions.push(`port ${port} of ${file} is put on "${servers[0]}"; move it if another task serves it`);
    const service = draft.services.get(named ?? servers[0])!.service;
    const mapped: DraftPort = { port, ...(entry.visibility === 'public' ? { public: true } : {}) };
    if (service.type === 'steps') (service.ports ??= []).push(mapped);
  }
  if (config.image) draft.unmapped.push(`${file}: image ${JSON.stringify(config.image)} is the editor's environment: pick the workspace's base image when you create it (svc ws create --base-image IMAGE)`);
  const ignored = Object.keys(config).filter((key) => !handled.has(key));
  if (ignored.length) draft.unmapped.push(`${file}: ${ignored.join(', ')}`);
}
