// A sign-in link sent by mail (`svc admin sign-in-link --mail`, POST /users/{user}/sign-in-links with `mail`):
// the link and its mail are made in one transaction, so the outbox sends it exactly when the link exists.
import type pg from 'pg';
import { createSignInLink } from '../auth/sessions.ts';
import { signInLinkMail } from '../mail/messages.ts';
import { queueMail } from '../mail/outbox.ts';
import { withTransaction } from '../store/database.ts';
import { findMail, type MailRow } from '../store/mail-outbox.ts';

export async function mailSignInLink(
  pool: pg.Pool,
  request: { userId: number; recipient: string; createdBy: number | null; baseUrl: string; minutes: number; now: Date },
): Promise<{ mail: MailRow; expiresAt: Date }> {
  const { id, expiresAt } = await withTransaction(pool, async (db) => {
    const link = await createSignInLink(db, request);
    const text = signInLinkMail({ url: link.url, expiresAt: link.expiresAt });
    const mailId = await queueMail(db, { kind: 'sign_in_link', invitationId: null, recipient: request.recipient, ...text, at: request.now });
    return { id: mailId, expiresAt: link.expiresAt };
  });
  return { mail: (await findMail(pool, id))!, expiresAt };
}
