// `GET /.svc/sign-in?token=...` on a workspace host: the link works once, briefly; it sets the host's session cookie
// and goes on to the page asked for.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WORKSPACE_SESSION_COOKIE, WORKSPACE_SESSION_MS, type WorkspaceAccess } from './access.ts';
import { Refusal } from './refusal.ts';

export async function answerSignIn(access: WorkspaceAccess, request: IncomingMessage, response: ServerResponse, host: string, secureCookie: boolean): Promise<void> {
  const token = new URL(request.url ?? '/', 'http://x').searchParams.get('token') ?? '';
  const redeemed = token ? await access.redeemLink(token, host) : undefined;
  if (!redeemed) throw new Refusal('linkExpired', 'Sign-in links work once and for two minutes: open the address from the console again.');
  const secure = secureCookie ? '; Secure' : '';
  response.writeHead(303, {
    location: redeemed.nextPath.startsWith('/') && !redeemed.nextPath.startsWith('//') ? redeemed.nextPath : '/',
    'set-cookie': `${WORKSPACE_SESSION_COOKIE}=${redeemed.sessionToken}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${WORKSPACE_SESSION_MS / 1000}${secure}`,
    'cache-control': 'no-store',
  });
  response.end();
}
