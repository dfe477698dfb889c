// What the driver reports of a pod's editor, from what it observes: whether the pod runs and what its agent says.
import type { AgentStatus } from '../../agent/protocol.ts';
import { RuntimeFailure, type EditorAddress, type EditorState } from '../driver.ts';

/** Status texts of spec 3.1 the driver reports. */
export const progressTexts = {
  starting: 'Starting',
  preparingVolume: 'Preparing the volume',
  cloning: 'Cloning repository',
  startingIde: 'Starting IDE',
} as const;

export type PodObservation =
  | { pod: 'absent' }
  /** The pod runs; `agent` is its answer, undefined while it does not answer yet. */
  | { pod: 'running'; agent: AgentStatus | undefined; editor: EditorAddress };

export function editorStateOf(observed: PodObservation): EditorState {
  if (observed.pod === 'absent') return { state: 'absent' };
  const agent = observed.agent;
  if (!agent) return { state: 'starting', statusText: progressTexts.starting };
  switch (agent.editor.state) {
    case 'ready':
      return { state: 'ready', address: observed.editor };
    case 'failed':
      return { state: 'failed', failure: new RuntimeFailure('ide', agent.editor.reason ?? 'the editor keeps exiting') };
    case 'starting':
      return { state: 'starting', statusText: progressTexts.startingIde };
  }
}

/**
 * Why a pod ended, from its log: the last line that names an error (bubblewrap's, git's, or a thrown Error's
 * message), else the last line. Node's stack frames and its closing version line are never the reason.
 */
export function podFailureReason(log: string): string | undefined {
  const lines = log
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !/^(at |Node\.js v|\^+$)/.test(line));
  const named = lines.filter((line) => /^(bwrap:|fatal:|\w*Error\b[^:]*:)/.test(line)).at(-1);
  const chosen = named ?? lines.at(-1);
  return chosen?.replace(/^(agent:|bwrap:|Error( \[\w+\])?:)\s*/, '');
}
