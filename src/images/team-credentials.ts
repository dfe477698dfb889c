// The credentials a team's pull of an image uses: those the team stored for the image's registry host.
import type { SecretBox } from '../core/secret-box.ts';
import type { Queryable } from '../store/database.ts';
import { findRegistryCredential } from '../store/registry-credentials.ts';
import { parseImageReference } from './reference.ts';
import type { RegistryCredentials } from './registry-auth.ts';

/** Where a registry password is sealed: bound to the team and the registry, so a copied row does not open. */
export const registryCredentialPlace = (teamId: number, registry: string) => `registry:${teamId}:${registry}`;

/** The team's credentials for the registry of `image`, or undefined (an anonymous pull). */
export async function teamCredentialsForImage(db: Queryable, secrets: SecretBox, teamId: number, image: string): Promise<RegistryCredentials | undefined> {
  const registry = parseImageReference(image).registry;
  const row = await findRegistryCredential(db, teamId, registry);
  if (!row) return undefined;
  return { username: row.username, password: secrets.open(row.sealed, registryCredentialPlace(teamId, registry)) };
}
