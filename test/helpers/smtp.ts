// A real SMTP server on loopback for tests (the `smtp-server` package): STARTTLS with its built-in certificate,
// AUTH PLAIN/LOGIN with one user, and modes a test switches between: `accept` keeps each message, `refuse` answers
// 451 to RCPT TO (an outage), `bounce` answers 550 to RCPT TO, `hold` takes the DATA and never answers it.
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** The text part, quoted-printable undone. */
  text: string;
  subject: string;
  messageId: string;
}

export type SmtpMode = 'accept' | 'refuse' | 'bounce' | 'hold';

export class TestSmtpServer {
  mode: SmtpMode = 'accept';
  readonly received: ReceivedMail[] = [];
  /** RCPT TO commands refused (mode refuse or bounce). */
  refusals = 0;
  /** Messages whose DATA arrived in mode hold (never answered: not delivered). */
  held = 0;
  /** Whether every session went through STARTTLS and AUTH. */
  readonly sessions: Array<{ secure: boolean; user?: string }> = [];
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(user = 'mailer', password = 'p@ss word'): Promise<TestSmtpServer> {
    let self: TestSmtpServer | undefined;
    const server = new SMTPServer({
      authMethods: ['PLAIN', 'LOGIN'],
      logger: false,
      onAuth(auth, _session, callback) {
        if (auth.username === user && auth.password === password) callback(null, { user: auth.username });
        else callback(Object.assign(new Error('bad credentials'), { responseCode: 535 }));
      },
      onRcptTo(_address, session, callback) {
        self!.sessions.push({ secure: session.secure, user: session.user as string | undefined });
        if (self!.mode === 'refuse' || self!.mode === 'bounce') {
          self!.refusals++;
          self!.changed();
          const code = self!.mode === 'refuse' ? 451 : 550;
          return callback(Object.assign(new Error(code === 451 ? 'try again later' : 'no such mailbox'), { responseCode: code }));
        }
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (self!.mode === 'hold') {
            self!.held++;
            self!.changed();
            return; // never answered: the client cannot know it arrived, so it was not delivered
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          self!.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            text: textOf(raw),
            subject: header(raw, 'subject'),
            messageId: header(raw, 'message-id'),
          });
          callback();
          self!.changed();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    server.on('error', () => undefined); // a client that went away mid-session
    const port = (server.server.address() as { port: number }).port;
    self = new TestSmtpServer(server, port);
    return self;
  }

  /** smtp:// URL with the credentials; STARTTLS with the built-in self-signed certificate. */
  url(user = 'mailer', password = 'p@ss word'): string {
    return `smtp://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${this.port}?starttls=required&tls_verify=false`;
  }

  /** Waits until `condition` holds (checked on every change), or fails after `timeoutMs`. */
  async until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`SMTP server: no ${what} within ${timeoutMs} ms (received ${this.received.length}, refusals ${this.refusals}, held ${this.held})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, 500));
        function done() {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        }
        const waiters = this.waiters;
        waiters.add(done);
      });
    }
  }

  private changed(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function header(raw: string, name: string): string {
  const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  return new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1].trim() ?? '';
}

/** The body of a single-part text message, quoted-printable decoded when so encoded. */
function textOf(raw: string): string {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/);
  const body = rest.join('\n\n');
  if (!/content-transfer-encoding:\s*quoted-printable/i.test(head)) return body;
  return body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The invitation or sign-in link in a mail's text. */
export function linkIn(mail: ReceivedMail): string {
  const match = /(https?:\/\/\S+#(?:invitation|token)=[\w-]+)/.exec(mail.text);
  if (!match) throw new Error(`no link in the mail:\n${mail.raw}`);
  return match[1];
}
