// Workspace states and status texts of spec 3.1 as a pure state machine: (state, event) -> state or refusal.
// The operations that create, wake, sleep and delete workspaces feed it what the runtime driver observes.

export const workspaceStates = ['creating', 'cloning', 'running', 'sleeping', 'waking_up', 'stopped', 'error', 'deleting'] as const;
export type WorkspaceStateName = (typeof workspaceStates)[number];

/** `archive-restore`: its volume is being refilled from the archive (no wake meanwhile); `archive-restored`: done. */
export type SleepReason = 'by-hand' | 'idle' | 'node-night' | 'node-drained' | 'archive-restore' | 'archive-restored';

/** Status texts of 3.1, exactly as written. */
export const statusTexts = {
  configuringStorage: 'Configuring storage',
  starting: 'Starting',
  preparingVolume: 'Preparing the volume',
  cloning: 'Cloning repository',
  startingIde: 'Starting IDE',
  running: 'Workspace is running',
  wakingUp: 'Waking up',
  deleted: '(soft-deleted)',
  stopped: 'Stopped',
  restoringArchive: 'Restoring the archive',
  changingOwner: 'Changing the owner of the volume',
} as const;

const asleep: Record<SleepReason, string> = {
  'by-hand': 'Asleep',
  idle: 'Asleep after being unused',
  'node-night': 'Asleep while its node is drained',
  'node-drained': 'Asleep since its pod was evicted',
  'archive-restore': statusTexts.restoringArchive,
  'archive-restored': 'Asleep',
};

/** Wake reasons shown to clients (console, waiting page). */
export const sleepReasonTexts: Record<SleepReason, string> = {
  'by-hand': 'put to sleep by hand',
  idle: 'nobody used it',
  'node-night': 'node out of service for the night',
  'node-drained': 'node drained',
  'archive-restore': 'being restored from an archive',
  'archive-restored': 'restored from an archive',
};

const errorPrefixes = {
  clone: 'Cloning the repository failed',
  'prepare-volume': 'Preparing the volume failed',
  agent: 'Installing the agent failed',
  ide: 'The IDE does not start',
} as const;
export type FailureStage = keyof typeof errorPrefixes;

export interface WorkspaceStatus {
  state: WorkspaceStateName;
  statusDetail: string;
  /** Why it sleeps; kept while it wakes up, so that the waiting page and the 503 text can name it (3.1). */
  sleepReason?: SleepReason;
  /** For git workspaces the create flow passes through `cloning`. */
  fromGit: boolean;
  /** The state to return to when a soft delete is undone. */
  beforeDelete?: WorkspaceStateName;
  /** Set while the volume is re-owned (spec 4.7): the state it had before, to return to afterwards. */
  beforeReown?: WorkspaceStateName;
}

export type WorkspaceEvent =
  | { type: 'progress'; statusText: string }
  | { type: 'editor-ready' }
  | { type: 'failed'; stage: FailureStage; reason: string }
  | { type: 'sleep'; reason: SleepReason }
  | { type: 'wake' }
  | { type: 'stop' }
  | { type: 'start' }
  | { type: 'delete' }
  | { type: 'restore' }
  | { type: 'reown' }
  | { type: 'reowned' };

export type Transition = { ok: true; status: WorkspaceStatus } | { ok: false; refusal: string };

const refuse = (refusal: string): Transition => ({ ok: false, refusal });
const to = (status: WorkspaceStatus): Transition => ({ ok: true, status });

export function initialStatus(fromGit: boolean): WorkspaceStatus {
  return { state: 'creating', statusDetail: statusTexts.configuringStorage, fromGit };
}

/** The state a progress text of the driver belongs to during creation or waking. */
function progressState(current: WorkspaceStatus, statusText: string): WorkspaceStateName {
  if (current.state === 'waking_up') return 'waking_up';
  if (statusText === statusTexts.cloning) return 'cloning';
  if (statusText === statusTexts.startingIde && current.state === 'cloning') return 'cloning';
  return 'creating';
}

export function applyWorkspaceEvent(current: WorkspaceStatus, event: WorkspaceEvent): Transition {
  const base = { fromGit: current.fromGit };
  if (current.beforeReown) return reowning(current, event);
  if (event.type === 'reown') return startReown(current);
  if (event.type === 'reowned') return refuse('The volume of the workspace is not being re-owned.');
  if (current.state === 'deleting' && event.type !== 'restore') return refuse('The workspace is deleted; restore it first.');
  switch (event.type) {
    case 'progress': {
      if (!['creating', 'cloning', 'waking_up', 'error'].includes(current.state)) return refuse(`No progress while ${current.state}.`);
      const state = progressState(current, event.statusText);
      return to({ ...base, state, statusDetail: event.statusText, sleepReason: state === 'waking_up' ? current.sleepReason : undefined });
    }
    case 'editor-ready':
      if (!['creating', 'cloning', 'waking_up', 'error'].includes(current.state)) return refuse(`The editor cannot become ready while ${current.state}.`);
      return to({ ...base, state: 'running', statusDetail: statusTexts.running });
    case 'failed':
      return to({ ...base, state: 'error', statusDetail: `${errorPrefixes[event.stage]}: ${event.reason}` });
    case 'sleep':
      if (current.state === 'sleeping') return to({ ...current, sleepReason: event.reason, statusDetail: asleep[event.reason] });
      if (!['running', 'waking_up', 'error'].includes(current.state)) return refuse(`A workspace that is ${describe(current.state)} cannot be put to sleep.`);
      return to({ ...base, state: 'sleeping', statusDetail: asleep[event.reason], sleepReason: event.reason });
    case 'wake':
      if (current.state === 'stopped') return refuse('The workspace is stopped; start it from the console.');
      if (current.sleepReason === 'archive-restore') return refuse('The workspace is busy with its volume (restoring an archive).');
      if (current.state === 'running' || current.state === 'waking_up') return to(current);
      if (current.state !== 'sleeping' && current.state !== 'error') return refuse(`A workspace that is ${describe(current.state)} cannot be woken.`);
      return to({ ...base, state: 'waking_up', statusDetail: statusTexts.wakingUp, sleepReason: current.sleepReason });
    case 'stop':
      if (current.state === 'stopped') return to(current);
      if (['creating', 'cloning'].includes(current.state)) return refuse('The workspace is still being created.');
      return to({ ...base, state: 'stopped', statusDetail: statusTexts.stopped });
    case 'start':
      if (current.state !== 'stopped') return refuse('Only a stopped workspace can be started.');
      return to({ ...base, state: 'waking_up', statusDetail: statusTexts.wakingUp });
    case 'delete':
      return to({ ...base, state: 'deleting', statusDetail: statusTexts.deleted, beforeDelete: afterDeleteState(current.state) });
    case 'restore':
      if (current.state !== 'deleting') return refuse('Only a deleted workspace can be restored.');
      return to(restoredStatus(current));
  }
}

/** Spec 4.7: any workspace but one being created stops while its volume is handed to the new UID. */
function startReown(current: WorkspaceStatus): Transition {
  if (current.state === 'creating' || current.state === 'cloning') return refuse('The workspace is still being created.');
  return to({ ...current, state: 'stopped', statusDetail: statusTexts.changingOwner, beforeReown: current.state });
}

/**
 * While its volume is re-owned the workspace takes no other move. Afterwards it goes back to what it was: a
 * soft-deleted one to Deleting, a sleeping or stopped one as it slept or stopped, any other one starts again
 * (Waking up; the caller queues the start).
 */
function reowning(current: WorkspaceStatus, event: WorkspaceEvent): Transition {
  if (event.type === 'reown') return to(current);
  if (event.type !== 'reowned') return refuse('The workspace is busy with its volume (changing its owner).');
  const { beforeReown, ...rest } = current;
  const base = { ...rest, beforeReown: undefined };
  if (beforeReown === 'deleting') return to({ ...base, state: 'deleting', statusDetail: statusTexts.deleted });
  if (beforeReown === 'stopped') return to({ ...base, state: 'stopped', statusDetail: statusTexts.stopped });
  if (beforeReown === 'sleeping') {
    const reason = current.sleepReason ?? 'by-hand';
    return to({ ...base, state: 'sleeping', statusDetail: asleep[reason], sleepReason: reason });
  }
  return to({ ...base, state: 'waking_up', statusDetail: statusTexts.wakingUp });
}

/** A deleted workspace's pods are gone: it comes back asleep (or stopped), never half-created. */
function afterDeleteState(state: WorkspaceStateName): WorkspaceStateName {
  return state === 'stopped' ? 'stopped' : 'sleeping';
}

function restoredStatus(current: WorkspaceStatus): WorkspaceStatus {
  const state = current.beforeDelete ?? 'sleeping';
  if (state === 'stopped') return { fromGit: current.fromGit, state, statusDetail: statusTexts.stopped };
  return { fromGit: current.fromGit, state: 'sleeping', statusDetail: asleep['by-hand'], sleepReason: 'by-hand' };
}

function describe(state: WorkspaceStateName): string {
  return state.replace('_', ' ');
}
