// The relying party: openid-client talks to the providers (discovery, the authorization URL with PKCE, state and
// nonce, the code exchange with every check of the ID token, userinfo, RP-initiated logout). svc checks no token
// itself. A provider's metadata is discovered at first use and kept; a failed discovery is tried again next time.
import * as client from 'openid-client';
import type { OidcProviderSettings } from './provider-settings.ts';

export interface ProviderClaims {
  issuer: string;
  subject: string;
  claims: Record<string, unknown>;
  idToken: string | null;
}

export class ProviderUnavailableError extends Error {}
/** The provider's answer failed a check (state, nonce, signature, issuer, audience, expiry, an error it returned). */
export class SignInCheckError extends Error {}

export class RelyingParty {
  private configuration: Promise<client.Configuration> | undefined;

  constructor(
    readonly settings: OidcProviderSettings,
    /** Read at each use: a server on port 0 learns its base URL once it listens. */
    private readonly redirectUri: () => string,
  ) {}

  private configure(): Promise<client.Configuration> {
    const settings = this.settings;
    const insecure = new URL(settings.issuer).protocol === 'http:'; // loopback only (provider-settings.ts)
    this.configuration ??= client
      .discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, { execute: insecure ? [client.allowInsecureRequests] : [], timeout: 10 })
      .then((configuration) => {
        // ID tokens from the token endpoint are checked against the provider's keys too, not only trusted by TLS.
        client.enableNonRepudiationChecks(configuration);
        return configuration;
      })
      .catch((error: Error) => {
        this.configuration = undefined;
        throw new ProviderUnavailableError(`${settings.name} (${settings.issuer}) cannot be reached or described itself wrongly: ${error.message}`);
      });
    return this.configuration;
  }

  async authorizationUrl(flow: { state: string; nonce: string; codeVerifier: string }): Promise<string> {
    const configuration = await this.configure();
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri(),
      scope: this.settings.scopes.join(' '),
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return url.href;
  }

  /** Exchanges the code of `callbackUrl`; every check openid-client makes must pass. */
  async finish(callbackUrl: URL, flow: { state: string; nonce: string; codeVerifier: string }): Promise<ProviderClaims> {
    const configuration = await this.configure();
    let tokens;
    try {
      tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw new SignInCheckError(describe(error));
    }
    const idClaims = tokens.claims()!;
    let userinfo: Record<string, unknown> = {};
    if (tokens.access_token && configuration.serverMetadata().userinfo_endpoint) {
      userinfo = await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub).catch(() => ({}));
    }
    // The signed ID token's claims win over userinfo's.
    return { issuer: idClaims.iss, subject: idClaims.sub, claims: { ...userinfo, ...idClaims }, idToken: tokens.id_token ?? null };
  }

  /** The provider's end_session_endpoint with the ID token as hint, or undefined when it has none. */
  async endSessionUrl(idToken: string | null, postLogoutRedirectUri: string): Promise<string | undefined> {
    const configuration = await this.configure().catch(() => undefined);
    if (!configuration?.serverMetadata().end_session_endpoint) return undefined;
    const parameters: Record<string, string> = { post_logout_redirect_uri: postLogoutRedirectUri, client_id: this.settings.clientId };
    if (idToken) parameters.id_token_hint = idToken;
    return client.buildEndSessionUrl(configuration, parameters).href;
  }
}

function describe(error: unknown): string {
  const e = error as { message?: string; error?: string; error_description?: string; cause?: unknown };
  if (e.error) return `the provider answered ${e.error}${e.error_description ? `: ${e.error_description}` : ''}`;
  return e.message ?? String(error);
}
