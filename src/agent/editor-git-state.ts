// Whose git credentials the editor (code-server) gets: the person who has it open, when exactly one person has. Each
// server that relays editor WebSockets of the workspace holds a channel to the agent and sends the people it sees
// there (editor-git.ts); the agent joins what every open channel says. Pure: no sockets, no files.
import type { ExecGitIdentity } from './stream-protocol.ts';

/** One person with an open editor WebSocket, as a server sends them: their id and git identity. */
export interface EditorPerson {
  userId: number;
  identity: ExecGitIdentity;
}

export type EditorGitState = { kind: 'person'; identity: ExecGitIdentity } | { kind: 'refused'; message: string };

const ALTERNATIVE = 'use `svc ssh` or the console terminal';

/** The state the views of every open channel give: one person's identity, or why there is none. */
export function editorGitState(views: Iterable<EditorPerson[]>): EditorGitState {
  const people = new Map<number, EditorPerson>();
  for (const view of views) for (const person of view) people.set(person.userId, person);
  if (people.size === 1) return { kind: 'person', identity: [...people.values()][0].identity };
  if (people.size === 0) return { kind: 'refused', message: `svc: nobody has this workspace's editor open; git credentials are given only when one person has it open — ${ALTERNATIVE}` };
  const emails = [...people.values()].map((p) => p.identity.email).sort();
  return {
    kind: 'refused',
    message: `svc: ${people.size} people have this workspace's editor open (${emails.join(', ')}); git credentials are given only when one person has it open — ${ALTERNATIVE}`,
  };
}

/**
 * The `[user]` section git includes (include.path) for commits: the person's name and e-mail, quoted as git's
 * config format wants; empty without a person (git then takes the workspace's own configuration).
 */
export function identityConfig(state: EditorGitState): string {
  if (state.kind !== 'person') return '';
  const quote = (value: string) => `"${value.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;
  return `[user]\n\tname = ${quote(state.identity.name)}\n\temail = ${quote(state.identity.email)}\n`;
}

/** Parses one message of a server's channel: the people it sees, or undefined when it is not one. */
export function readEditorPeople(text: string): EditorPerson[] | undefined {
  try {
    const value = JSON.parse(text) as { people?: unknown };
    if (!Array.isArray(value.people)) return undefined;
    const ok = value.people.every((p: Partial<EditorPerson>) => Number.isInteger(p?.userId) && isIdentity(p?.identity));
    return ok ? (value.people as EditorPerson[]) : undefined;
  } catch {
    return undefined;
  }
}

function isIdentity(value: unknown): value is ExecGitIdentity {
  const v = value as Partial<ExecGitIdentity> | undefined;
  const text = (x: unknown) => typeof x === 'string';
  return !!v && text(v.name) && text(v.email) && (v.sshKey === undefined || text(v.sshKey))
    && Array.isArray(v.credentials) && v.credentials.every((c) => text(c?.host) && text(c?.username) && text(c?.password));
}
