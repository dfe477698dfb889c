// Words for the API's values, as the specification names them for people (3.1, 3.2, 3.3, 3.7).
import { certificateLabels, verificationLabels, type Domain } from '../../sdk/src/index.ts';

export type Tone = 'good' | 'busy' | 'idle' | 'bad' | 'neutral';

export interface Label {
  text: string;
  tone: Tone;
}

const label = (text: string, tone: Tone): Label => ({ text, tone });

export const workspaceStates: Record<string, Label> = {
  creating: label('Creating', 'busy'),
  cloning: label('Cloning', 'busy'),
  running: label('Running', 'good'),
  sleeping: label('Sleeping', 'idle'),
  waking_up: label('Waking up', 'busy'),
  stopped: label('Stopped', 'idle'),
  error: label('Error', 'bad'),
  deleting: label('Deleting', 'neutral'),
};

export const serviceStatuses: Record<string, Label> = {
  pending: label('Pending', 'busy'),
  starting: label('Starting', 'busy'),
  running: label('Running', 'good'),
  internal: label('Internal', 'good'),
  finished: label('Finished', 'neutral'),
  failure: label('Failed', 'bad'),
  stopped: label('Stopped', 'idle'),
  sleeping: label('Sleeping', 'idle'),
};

/** Managed-service statuses (3.4). */
export const managedStatuses: Record<string, Label> = {
  creating: label('Creating', 'busy'),
  updating: label('Updating', 'busy'),
  pausing: label('Pausing', 'busy'),
  unpausing: label('Resuming', 'busy'),
  deleting: label('Deleting', 'busy'),
  synchronized: label('Synchronized', 'good'),
  paused: label('Paused', 'idle'),
  deleted: label('Deleted', 'neutral'),
  unknown: label('Unknown', 'bad'),
  'invalid-provider': label('Invalid provider', 'bad'),
};

export const runStates: Record<string, Label> = {
  waiting: label('Waiting', 'busy'),
  running: label('Running', 'busy'),
  success: label('Succeeded', 'good'),
  failure: label('Failed', 'bad'),
  aborted: label('Stopped', 'idle'),
  skipped: label('Skipped', 'neutral'),
};

export const operationStates: Record<string, Label> = {
  pending: label('Waiting', 'busy'),
  running: label('Running', 'busy'),
  succeeded: label('Done', 'good'),
  failed: label('Failed', 'bad'),
};

export const bannerStates: Record<string, Label> = {
  'no-landscape': label('No landscape yet', 'neutral'),
  'in-sync': label('In sync', 'good'),
  changed: label('Changed since the last Sync', 'busy'),
  'formatting-only': label('Edited, same landscape (formatting only)', 'good'),
  'variables-changed': label('Variables or settings changed since the last Sync', 'busy'),
  'other-profile': label('Deployed from another profile', 'busy'),
  'file-errors': label('The file has errors', 'bad'),
  'not-comparable': label('The file could not be compared', 'bad'),
  'workspace-not-running': label('Workspace not running: the file cannot be compared', 'idle'),
  'torn-down': label('Torn down', 'idle'),
  applying: label('Applying changes', 'busy'),
};

export const devUrlStates: Record<string, Label> = {
  served: label('Served', 'good'),
  asleep: label('Asleep (wakes on open)', 'idle'),
  'waking-up': label('Waking up', 'busy'),
  starting: label('Starting', 'busy'),
  stopped: label('Stopped', 'idle'),
  failed: label('Failed to start', 'bad'),
  'not-served': label('Nothing is served at / yet', 'neutral'),
};

/** The mail carrying an invitation link (docs/people.md, "The outbox"). */
export const mailStates: Record<string, Label> = {
  not_sent: label('Not sent', 'neutral'),
  queued: label('Queued', 'busy'),
  sending: label('Sending', 'busy'),
  retrying: label('Retrying', 'busy'),
  sent: label('Sent', 'good'),
  failed: label('Failed', 'bad'),
  bounced: label('Bounced', 'bad'),
  cancelled: label('Cancelled', 'neutral'),
};

export const invitationStates: Record<string, Label> = {
  pending: label('Pending', 'busy'),
  expired: label('Expired', 'idle'),
  accepted: label('Accepted', 'good'),
  revoked: label('Revoked', 'neutral'),
};

export const NEEDS_OWNER = label('Needs an owner', 'bad');

export const operationKinds: Record<string, string> = {
  'workspace.create': 'Create workspace',
  'workspace.delete': 'Delete workspace',
  'workspace.restore': 'Restore workspace',
  'workspace.purge': 'Purge workspace',
  'workspace.wake': 'Wake workspace',
  'workspace.archive': 'Archive workspace',
  'workspace.restore_archive': 'Restore the archive',
  'workspace.volume_owner': 'Change the volume owner',
  'landscape.sync': 'Sync',
  'landscape.teardown': 'Teardown',
  'managed_service.dump': 'Dump a managed service',
};

export const planActions: Record<string, { sign: string; text: string }> = {
  create: { sign: '+', text: 'create' },
  change: { sign: '~', text: 'change' },
  replace: { sign: '±', text: 'replace' },
  remove: { sign: '−', text: 'remove' },
};

/** The label of `value` in `table`, or the value itself when a newer server sends one this console does not know. */
export function labelOf(table: Record<string, Label>, value: string): Label {
  return table[value] ?? label(value.replace(/[-_]/g, ' ').replace(/^./, (c) => c.toUpperCase()), 'neutral');
}

/** Where a field error points, for people: `line 4, column 7` in svc.yml, else the field. */
export function errorPlace(error: { pointer: string; line?: number; column?: number; in?: string }): string {
  if (error.line !== undefined) return `line ${error.line}${error.column !== undefined ? `, column ${error.column}` : ''}`;
  const field = error.pointer.replace(/^\//, '').replace(/\//g, ' › ') || 'the request';
  return error.in && error.in !== 'body' ? `${field} (${error.in})` : field;
}

/** `sha256:` and the first 12 hex digits of an image digest (the full one is in the title). */
export const shortDigest = (digest: string): string => digest.slice(0, 'sha256:'.length + 12);

/** A custom domain's verification status and certificate state (3.6), in the SDK's words. */
export const domainVerification: Record<Domain['verification']['status'], Label> = {
  'not-checked': label(verificationLabels['not-checked'], 'idle'),
  checking: label(verificationLabels.checking, 'busy'),
  verified: label(verificationLabels.verified, 'good'),
  failed: label(verificationLabels.failed, 'bad'),
  lapsed: label(verificationLabels.lapsed, 'bad'),
};

export const domainCertificate: Record<Domain['certificate']['state'], Label> = {
  'waits-for-verification': label(certificateLabels['waits-for-verification'], 'idle'),
  'being-issued': label(certificateLabels['being-issued'], 'busy'),
  issued: label(certificateLabels.issued, 'good'),
  failed: label(certificateLabels.failed, 'bad'),
  covered: label(certificateLabels.covered, 'good'),
  uploaded: label(certificateLabels.uploaded, 'good'),
  'not-managed': label(certificateLabels['not-managed'], 'neutral'),
};
