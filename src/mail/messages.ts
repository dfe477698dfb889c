// The texts of the mail svc sends. Plain text: a link and what it does, nothing to render.

export interface MailText {
  subject: string;
  text: string;
}

export function invitationMail(input: { orgName: string; inviterName: string; teams: string[]; url: string; expiresAt: Date }): MailText {
  const into = input.teams.length > 0 ? ` and its team${input.teams.length > 1 ? 's' : ''} ${input.teams.join(', ')}` : '';
  return {
    subject: `${input.inviterName} invited you to ${input.orgName} on svc`,
    text: [
      `${input.inviterName} invited you to the organization ${input.orgName}${into} on svc.`,
      '',
      'Open this link to accept; it signs you in, and makes your account if you have none yet:',
      '',
      `  ${input.url}`,
      '',
      `The link works once, until ${input.expiresAt.toUTCString()}.`,
      'If you did not expect this invitation, ignore this mail.',
    ].join('\n'),
  };
}

export function signInLinkMail(input: { url: string; expiresAt: Date }): MailText {
  return {
    subject: 'Your sign-in link for svc',
    text: [
      'Open this link to sign in to svc:',
      '',
      `  ${input.url}`,
      '',
      `The link works once, until ${input.expiresAt.toUTCString()}.`,
      'If you did not ask for it, ignore this mail.',
    ].join('\n'),
  };
}
