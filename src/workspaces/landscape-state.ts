// The landscape of a workspace as its page shows it: the banner state of spec 3.7 and the deployed services.
// Pure: the caller reads the file, the deployed record and the variables; this decides.
import { createHash } from 'node:crypto';
import { canonicalJson, compareLandscapes, type LandscapeError, type NormalLandscape } from '../landscape/index.ts';
import type { LandscapeFileRead } from '../runtime/workspace-files.ts';

export type BannerState =
  | 'no-landscape'
  | 'in-sync'
  | 'changed'
  | 'formatting-only'
  | 'variables-changed'
  | 'other-profile'
  | 'file-errors'
  | 'not-comparable'
  | 'workspace-not-running'
  | 'torn-down'
  | 'applying';

export interface Banner {
  state: BannerState;
  detail?: string;
  errors?: LandscapeError[];
}

export interface DeployedLandscape {
  profile: string | null;
  text: string;
  normal: NormalLandscape;
  variablesHash: string;
  tornDown: boolean;
}

/** The selected file as read and checked now. */
export interface CurrentLandscape {
  fileName: string;
  read: LandscapeFileRead;
  normal?: NormalLandscape;
  /** The first errors (parseLandscape's cap); `omitted` counts the others. */
  errors: LandscapeError[];
  omitted?: number;
}

export interface BannerInput {
  applying: boolean;
  deployed?: DeployedLandscape;
  selectedProfile: string | null;
  current: CurrentLandscape;
  variablesHash: string;
}

/** Variables and secrets as one value, so that a Sync can tell later whether they changed since. */
export function variablesHash(variables: { name: string; value: string }[], secrets: { name: string; updated_at: Date }[]): string {
  const text = canonicalJson({
    variables: variables.map((v) => [v.name, v.value]),
    secrets: secrets.map((s) => [s.name, s.updated_at.toISOString()]),
  });
  return createHash('sha256').update(text).digest('hex');
}

export function landscapeBanner(input: BannerInput): Banner {
  const { deployed, current } = input;
  if (input.applying) return { state: 'applying', detail: 'Applying changes' };
  if (deployed?.tornDown) return { state: 'torn-down', detail: 'Torn down: no service runs; Sync starts them again' };
  switch (current.read.state) {
    case 'no-volume':
      return { state: 'workspace-not-running', detail: 'The workspace has no volume now, so the file cannot be compared' };
    case 'unreadable':
      return { state: 'not-comparable', detail: current.read.reason };
    case 'missing':
      return deployed
        ? { state: 'changed', detail: `${current.fileName} was removed since the last Sync` }
        : { state: 'no-landscape', detail: `No ${current.fileName} in /data/app yet` };
  }
  if (current.errors.length > 0 || !current.normal) {
    const omitted = current.omitted ?? 0;
    const more = omitted > 0 ? `; the first ${current.errors.length} are listed` : '';
    return { state: 'file-errors', detail: `${current.fileName} has ${current.errors.length + omitted} error(s)${more}`, errors: current.errors };
  }
  if (!deployed) return { state: 'no-landscape', detail: 'Not synced yet: Sync applies the file' };
  if (deployed.profile !== input.selectedProfile) {
    return { state: 'other-profile', detail: `Deployed from ${profileLabel(deployed.profile)}, not ${profileLabel(input.selectedProfile)}` };
  }
  const comparison = compareLandscapes({ text: deployed.text, normal: deployed.normal }, { text: current.read.text, normal: current.normal });
  if (comparison === 'changed') return { state: 'changed', detail: `${current.fileName} changed since the last Sync` };
  if (deployed.variablesHash !== input.variablesHash) {
    return { state: 'variables-changed', detail: 'Environment variables or secrets changed since the last Sync' };
  }
  if (comparison === 'formatting-only') return { state: 'formatting-only', detail: 'Edited, but describing the same landscape' };
  return { state: 'in-sync', detail: 'In sync' };
}

function profileLabel(profile: string | null): string {
  return profile === null ? 'svc.yml' : `profile ${profile}`;
}
