// Who has a workspace's editor open through this server: each editor WebSocket the router relays (code-server keeps
// one or two per window) counts for the person who opened it, until it closes, which the stream guard does when
// that person loses the right (upgrade-guard.ts). While anyone does, the server holds a channel to the editor pod's
// agent and sends it these people with their git identities (src/agent/editor-git.ts); the agent joins the channels
// of every server and gives the editor's git the credentials of the one person who has it open, or none. A closed
// channel (this server gone) takes its people with it.
import WebSocket from 'ws';
import type { CallerUser } from '../auth/credentials.ts';
import type { ExecGitIdentity } from '../agent/stream-protocol.ts';
import type { RuntimeDriver, WorkspaceRef } from '../runtime/driver.ts';

export interface EditorPresenceDeps {
  driver: Pick<RuntimeDriver, 'openEditorGit'>;
  /** The person's git identity (their credentials opened from the vault): sent to the agent, never kept here. */
  identityOf(user: CallerUser): Promise<ExecGitIdentity>;
  log: (message: string) => void;
  /** How long after a failed or lost channel it is opened again while people remain (1 s). */
  retryMs?: number;
}

interface WorkspaceEditors {
  ref: WorkspaceRef;
  /** Open editor WebSockets per person. */
  people: Map<number, { user: CallerUser; connections: number }>;
  channel?: WebSocket;
  /** Each change is sent after the one before (identities are looked up on the way). */
  sending: Promise<void>;
  retry?: NodeJS.Timeout;
}

export class EditorPresence {
  private readonly workspaces = new Map<number, WorkspaceEditors>();
  private closed = false;

  constructor(private readonly deps: EditorPresenceDeps) {}

  /** `user` opened an editor WebSocket of `workspace`; the answer says it closed (once, whatever the reason). */
  opened(workspace: WorkspaceRef, user: CallerUser): () => void {
    let entry = this.workspaces.get(workspace.id);
    if (!entry) {
      entry = { ref: workspace, people: new Map(), sending: Promise.resolve() };
      this.workspaces.set(workspace.id, entry);
    }
    const editors = entry;
    const person = editors.people.get(user.id) ?? { user, connections: 0 };
    person.connections += 1;
    editors.people.set(user.id, person);
    if (person.connections === 1) this.changed(editors);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      person.connections -= 1;
      if (person.connections > 0) return;
      editors.people.delete(user.id);
      this.changed(editors);
    };
  }

  /** The ids of the people with an open editor WebSocket of `workspaceId` through this server. */
  peopleOf(workspaceId: number): number[] {
    return [...(this.workspaces.get(workspaceId)?.people.keys() ?? [])];
  }

  close(): void {
    this.closed = true;
    for (const entry of this.workspaces.values()) {
      clearTimeout(entry.retry);
      entry.channel?.close(1001, 'the server stops');
    }
    this.workspaces.clear();
  }

  private changed(entry: WorkspaceEditors): void {
    clearTimeout(entry.retry);
    entry.sending = entry.sending.then(() => this.send(entry)).catch((error: Error) => {
      this.deps.log(`editor presence: workspace ${entry.ref.id}: the editor's git credentials could not be sent: ${error.message}`);
      this.retryLater(entry);
    });
  }

  private retryLater(entry: WorkspaceEditors): void {
    if (this.closed || entry.people.size === 0 || this.workspaces.get(entry.ref.id) !== entry) return;
    clearTimeout(entry.retry);
    entry.retry = setTimeout(() => this.changed(entry), this.deps.retryMs ?? 1000);
    entry.retry.unref();
  }

  private async send(entry: WorkspaceEditors): Promise<void> {
    if (this.closed) return;
    if (entry.people.size === 0) {
      entry.channel?.close(1000, 'nobody has the editor open here');
      entry.channel = undefined;
      if (this.workspaces.get(entry.ref.id) === entry) this.workspaces.delete(entry.ref.id);
      return;
    }
    const people = await Promise.all([...entry.people.values()].map(async ({ user }) => ({ userId: user.id, identity: await this.deps.identityOf(user) })));
    if (entry.people.size === 0) return this.send(entry); // everyone left meanwhile
    if (!entry.channel || entry.channel.readyState !== WebSocket.OPEN) entry.channel = await this.openChannel(entry);
    entry.channel.send(JSON.stringify({ people }));
  }

  private async openChannel(entry: WorkspaceEditors): Promise<WebSocket> {
    const channel = await this.deps.driver.openEditorGit(entry.ref);
    channel.on('close', () => {
      if (entry.channel !== channel) return;
      entry.channel = undefined;
      // the agent went away (the pod restarted, say) while people still have the editor open: tell the next one
      this.retryLater(entry);
    });
    channel.on('message', () => undefined);
    channel.resume();
    if (this.closed) channel.close(1001, 'the server stops');
    return channel;
  }
}
