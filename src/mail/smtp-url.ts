// The mail server by URL (--smtp-url): smtp://[user:password@]host[:port] speaks STARTTLS when the server offers it,
// smtps:// speaks TLS from the start. `?starttls=required` refuses a server that offers no STARTTLS, `never` does
// not use it; `?tls_verify=false` accepts a certificate that does not verify (a private CA, tests). Pure.

export interface SmtpSettings {
  host: string;
  port: number;
  /** TLS from the first byte (smtps, port 465). */
  secure: boolean;
  starttls: 'opportunistic' | 'required' | 'never';
  verifyCertificate: boolean;
  auth?: { user: string; pass: string };
}

export class SmtpUrlError extends Error {}

export function parseSmtpUrl(text: string): SmtpSettings {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SmtpUrlError(`SMTP URL must look like smtp://user:password@host:587 or smtps://host:465, got "${redact(text)}"`);
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new SmtpUrlError(`SMTP URL must start with smtp:// or smtps://, got "${url.protocol}//"`);
  }
  if (!url.hostname) throw new SmtpUrlError('SMTP URL has no host');
  const secure = url.protocol === 'smtps:';
  const known = new Set(['starttls', 'tls_verify']);
  for (const key of url.searchParams.keys()) {
    if (!known.has(key)) throw new SmtpUrlError(`SMTP URL: unknown parameter "${key}" (known: starttls, tls_verify)`);
  }
  const starttls = url.searchParams.get('starttls') ?? 'opportunistic';
  if (starttls !== 'opportunistic' && starttls !== 'required' && starttls !== 'never') {
    throw new SmtpUrlError(`SMTP URL: starttls must be opportunistic, required or never, got "${starttls}"`);
  }
  if (secure && starttls !== 'opportunistic') throw new SmtpUrlError('SMTP URL: smtps:// is TLS from the start; starttls does not apply');
  const verify = url.searchParams.get('tls_verify') ?? 'true';
  if (verify !== 'true' && verify !== 'false') throw new SmtpUrlError(`SMTP URL: tls_verify must be true or false, got "${verify}"`);
  const settings: SmtpSettings = {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    starttls,
    verifyCertificate: verify === 'true',
  };
  if (url.username) settings.auth = { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
  return settings;
}

/** The URL without its password, for messages and logs. */
export function redact(text: string): string {
  return text.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');
}

/** nodemailer's SMTP transport options for the settings; timeouts stay well inside the mail lease. */
export function transportOptions(settings: SmtpSettings) {
  return {
    host: settings.host,
    port: settings.port,
    secure: settings.secure,
    requireTLS: settings.starttls === 'required',
    ignoreTLS: settings.starttls === 'never',
    tls: { rejectUnauthorized: settings.verifyCertificate },
    auth: settings.auth,
    connectionTimeout: 20_000,
    greetingTimeout: 20_000,
    socketTimeout: 40_000,
  };
}
