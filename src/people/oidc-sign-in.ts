// Signing in with an OpenID Connect provider: the flow's start (state, nonce, PKCE verifier, a cookie binding it to
// the browser) and its callback: who comes in (an identity linked by issuer and subject; else a new account when the
// verified address is in an allowed domain or has an open invitation), the role rules, and the session.
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import { MINUTE } from '../core/clock.ts';
import { problem } from '../core/problems.ts';
import { randomToken, sha256 } from '../core/secrets.ts';
import { ProviderUnavailableError, SignInCheckError, type ProviderClaims, type RelyingParty } from '../auth/oidc/relying-party.ts';
import { startSession, type NewSession } from '../auth/sessions.ts';
import { isUniqueViolation, withTransaction, type Queryable } from '../store/database.ts';
import { findInvitation } from '../store/invitations.ts';
import { findIdentity, insertFlow, type OidcFlowRow, insertIdentity, openInvitationIds, recordSessionProvider, takeFlow, touchIdentity } from '../store/oidc.ts';
import { findUserByEmail, insertUser } from '../store/users.ts';
import { joinByInvitation } from './invitations.ts';
import { applyRoleRules } from './oidc-roles.ts';

export interface OidcDeps {
  pool: pg.Pool;
  clock: Clock;
  providers: Map<string, RelyingParty>;
}

/** A flow must come back within this time. */
const FLOW_MS = 10 * MINUTE;

const failed = (detail: string) => problem('oidc-sign-in-failed', 403, detail);
const refused = (detail: string) => problem('oidc-sign-in-refused', 403, detail);

export function relyingParty(deps: OidcDeps, providerId: string): RelyingParty {
  const party = deps.providers.get(providerId);
  if (!party) throw problem('oidc-provider-unknown', 404, `This installation has no sign-in provider "${providerId}".`);
  return party;
}

/** A path on the console to return to; anything else (another site, `//host`) becomes `/`. */
export function safeReturnPath(value: string | undefined): string {
  return value && value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\') ? value : '/';
}

const unavailable = (error: unknown) => {
  if (error instanceof ProviderUnavailableError) throw problem('oidc-provider-unavailable', 502, error.message);
  throw error;
};

/** The provider's authorization address, and the browser binding to set as a cookie. */
export async function startFlow(deps: OidcDeps, providerId: string, request: { returnTo: string; linkUserId: number | null }): Promise<{ url: string; binding: string }> {
  const party = relyingParty(deps, providerId);
  const flow = { state: randomToken(32), nonce: randomToken(32), codeVerifier: randomToken(48) };
  const binding = randomToken(32);
  const url = await party.authorizationUrl(flow).catch(unavailable);
  const now = deps.clock.now();
  await insertFlow(deps.pool, {
    stateHash: sha256(flow.state),
    bindingHash: sha256(binding),
    provider: providerId,
    nonce: flow.nonce,
    codeVerifier: flow.codeVerifier,
    returnTo: safeReturnPath(request.returnTo),
    linkUserId: request.linkUserId,
    at: now,
    expiresAt: new Date(now.getTime() + FLOW_MS),
  });
  return { url, binding };
}

export type FlowResult =
  | { kind: 'signed-in'; userId: number; session: NewSession; returnTo: string }
  | { kind: 'linked'; userId: number; returnTo: string };

export async function finishFlow(
  deps: OidcDeps,
  providerId: string,
  callbackUrl: URL,
  binding: string | undefined,
  address: string | null,
): Promise<FlowResult> {
  const party = relyingParty(deps, providerId);
  const state = callbackUrl.searchParams.get('state');
  if (!state) throw failed('The answer of the provider carries no state; start the sign-in again.');
  const flow = await takeFlow(deps.pool, sha256(state));
  const now = deps.clock.now();
  if (!flow || flow.provider !== providerId) throw failed('This sign-in is not one this server started, or it was finished already; start the sign-in again.');
  if (flow.expires_at <= now) throw failed('This sign-in took too long; start it again.');
  if (!binding || !sha256(binding).equals(flow.binding_hash)) throw failed('This sign-in was started in another browser; start it again here.');
  const providerError = callbackUrl.searchParams.get('error');
  if (providerError) throw failed(`${party.settings.name} answered ${providerError}${callbackUrl.searchParams.get('error_description') ? `: ${callbackUrl.searchParams.get('error_description')}` : ''}.`);
  const signedIn = await party.finish(callbackUrl, { state, nonce: flow.nonce, codeVerifier: flow.code_verifier }).catch((error) => {
    if (error instanceof SignInCheckError) throw failed(`${party.settings.name}'s answer failed a check: ${error.message}`);
    return unavailable(error);
  });
  return withTransaction(deps.pool, (db) => admit(db, { party, providerId, flow, signedIn, now, address })).catch((error) => {
    // Two first sign-ins of one person at once: the second finds the first's account next time.
    if (isUniqueViolation(error)) throw problem('conflict', 409, 'Another sign-in of this account was finishing at the same moment; sign in again.');
    throw error;
  });
}

/** Who comes in, and as whom: a link to the signed-in account, the linked account, or a new one; then the rules and the session. */
async function admit(
  db: Queryable,
  { party, providerId, flow, signedIn, now, address }: { party: RelyingParty; providerId: string; flow: OidcFlowRow; signedIn: ProviderClaims; now: Date; address: string | null },
): Promise<FlowResult> {
  const identity = await findIdentity(db, signedIn.issuer, signedIn.subject);
  const email = typeof signedIn.claims.email === 'string' ? signedIn.claims.email : null;
  if (flow.link_user_id !== null) {
    if (identity && identity.user_id !== flow.link_user_id) throw problem('oidc-identity-taken', 409, `This ${party.settings.name} account is linked to another svc account.`);
    if (!identity && !(await insertIdentity(db, { issuer: signedIn.issuer, subject: signedIn.subject, provider: providerId, userId: flow.link_user_id, email, at: now }))) {
      throw problem('oidc-identity-taken', 409, `Your svc account is linked to another ${party.settings.name} account already.`);
    }
    await applyRoleRules(db, party.settings, flow.link_user_id, signedIn.claims, { now, address });
    return { kind: 'linked', userId: flow.link_user_id, returnTo: flow.return_to };
  }
  let userId: number;
  if (identity) {
    userId = identity.user_id;
    await touchIdentity(db, signedIn.issuer, signedIn.subject, email, now);
  } else {
    userId = await admitNewPerson(db, party, signedIn, email, now);
  }
  await applyRoleRules(db, party.settings, userId, signedIn.claims, { now, address });
  const session = await startSession(db, userId, now);
  await recordSessionProvider(db, sha256(session.token), providerId, signedIn.idToken);
  return { kind: 'signed-in', userId, session, returnTo: flow.return_to };
}

/** A first sign-in: an account made for a verified address in an allowed domain or with an open invitation. */
async function admitNewPerson(
  db: Queryable,
  party: RelyingParty,
  signedIn: { issuer: string; subject: string; claims: Record<string, unknown> },
  email: string | null,
  now: Date,
): Promise<number> {
  const name = party.settings.name;
  if (!email) throw refused(`${name} did not tell svc your e-mail address (the provider needs the "email" scope and claim).`);
  const verified = signedIn.claims.email_verified === true || signedIn.claims.email_verified === 'true';
  if (!verified) throw refused(`${name} has not verified your address ${email}; verify it there, then sign in again.`);
  if (await findUserByEmail(db, email)) {
    throw refused(`An svc account for ${email} exists already. Sign in to it by your usual means (a sign-in link), then link ${name} in your settings.`);
  }
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const invitations = await openInvitationIds(db, email, now);
  if (!party.settings.allowedDomains.includes(domain) && invitations.length === 0) {
    const allowed = party.settings.allowedDomains;
    throw refused(`${email} may not make an account here: ${allowed.length ? `${name} admits addresses of ${allowed.join(', ')}` : `${name} admits invited people only`}, and no invitation for ${email} is open. Ask an administrator to invite you.`);
  }
  const displayName = typeof signedIn.claims.name === 'string' && signedIn.claims.name.trim() ? signedIn.claims.name.trim().slice(0, 200) : email.split('@')[0];
  const user = await insertUser(db, { email, name: displayName, passwordHash: null, isAdmin: false, at: now });
  await insertIdentity(db, { issuer: signedIn.issuer, subject: signedIn.subject, provider: party.settings.id, userId: user.id, email, at: now });
  for (const id of invitations) await joinByInvitation(db, (await findInvitation(db, id, true))!, user.id, now);
  return user.id;
}

