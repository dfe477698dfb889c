// Queuing mail: a row of the outbox in the caller's transaction (gone with a rollback, sent after a commit).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../store/database.ts';
import { insertMail, type MailRow } from '../store/mail-outbox.ts';

export async function queueMail(
  db: Queryable,
  mail: { kind: MailRow['kind']; invitationId: string | null; recipient: string; subject: string; text: string; at: Date },
): Promise<string> {
  const id = randomUUID();
  await insertMail(db, { id, kind: mail.kind, invitationId: mail.invitationId, recipient: mail.recipient, subject: mail.subject, bodyText: mail.text, at: mail.at });
  return id;
}
