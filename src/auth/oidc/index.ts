// Single sign-on with OpenID Connect: the operator's providers as relying parties of this installation.
import { readFile } from 'node:fs/promises';
import { parseProviderSettings, ProviderSettingsError, type OidcProviderSettings } from './provider-settings.ts';
import { RelyingParty } from './relying-party.ts';

export { ProviderSettingsError, RelyingParty };
export type { OidcProviderSettings };

/** The path of a provider's callback, as registered at the provider (base URL + this). */
export const callbackPath = (providerId: string) => `/api/v1/auth/oidc/${providerId}/callback`;

/** The providers of --oidc-providers and --oidc-providers-file (both may be given; ids must differ). */
export async function loadOidcProviders(
  config: { baseUrl: string; oidcProviders?: string; oidcProvidersFile?: string },
  env: Record<string, string | undefined>,
): Promise<Map<string, RelyingParty>> {
  const settings: OidcProviderSettings[] = [];
  if (config.oidcProviders) settings.push(...parseProviderSettings(config.oidcProviders, env));
  if (config.oidcProvidersFile) {
    const text = await readFile(config.oidcProvidersFile, 'utf8').catch((error: Error) => {
      throw new ProviderSettingsError(`OIDC providers file ${config.oidcProvidersFile}: ${error.message}`);
    });
    settings.push(...parseProviderSettings(text, env));
  }
  const parties = new Map<string, RelyingParty>();
  for (const provider of settings) {
    if (parties.has(provider.id)) throw new ProviderSettingsError(`OIDC providers: provider ${provider.id}: id is used twice`);
    parties.set(provider.id, new RelyingParty(provider, () => new URL(callbackPath(provider.id), config.baseUrl).href));
  }
  return parties;
}
