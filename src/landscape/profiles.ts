// Profiles: complete landscape files named svc.<profile>.yml next to svc.yml, each a variant of the landscape.
import { problem } from '../core/problems.ts';

/** Profile names: lowercase letters, digits and dashes, not starting or ending with a dash, 1 to 32 characters. */
export const profileNamePattern = '^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$';

/** The file of the landscape without a profile. */
export const defaultLandscapeFileName = 'svc.yml';

const profileName = new RegExp(profileNamePattern);
const profileFile = /^svc\.([^./]+)\.yml$/;

export const isProfileName = (name: string): boolean => profileName.test(name);

/** `svc.yml` for no profile, `svc.<profile>.yml` otherwise; throws a validation problem for a bad name. */
export function profileFileName(profile?: string | null): string {
  if (profile === undefined || profile === null) return defaultLandscapeFileName;
  if (!isProfileName(profile)) {
    const message = 'a profile name has lowercase letters, digits and dashes, does not start or end with a dash, 1 to 32 characters';
    throw problem('validation', 422, `Profile ${JSON.stringify(profile)} is not a valid profile name.`, { errors: [{ pointer: '/profile', message }] });
  }
  return `svc.${profile}.yml`;
}

/** The profile a file name stands for: null for svc.yml, undefined when it is no landscape file. */
export function profileOfFileName(fileName: string): string | null | undefined {
  if (fileName === defaultLandscapeFileName) return null;
  const name = profileFile.exec(fileName)?.[1];
  return name !== undefined && isProfileName(name) ? name : undefined;
}

/** The profiles found among the names of a directory's files, sorted. */
export function profilesInDirectory(fileNames: Iterable<string>): string[] {
  const profiles: string[] = [];
  for (const fileName of fileNames) {
    const profile = profileOfFileName(fileName);
    if (typeof profile === 'string') profiles.push(profile);
  }
  return profiles.sort();
}
