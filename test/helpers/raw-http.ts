// Requests HTTP clients refuse to send (a negative Content-Length, `%00` in a path, a 20,000-character address),
// written byte for byte on a TCP socket, and the answer as the server sent it.
import net from 'node:net';

export interface RawAnswer {
  status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `head` (the request line and headers, without the empty line that ends them) and `body`, then reads until
 * the server closes or the answer's Content-Length is in. Rejects when nothing arrives within 10 s.
 */
export function rawRequest(port: number, head: string, body = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${head.slice(0, 80)}`)));
    const done = (final = false) => {
      const answer = parseAnswer(Buffer.concat(chunks).toString('utf8'), final);
      if (answer) {
        socket.destroy();
        resolve(answer);
      }
      return answer;
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      done();
    });
    socket.on('end', () => done(true) ?? reject(new Error(`incomplete answer: ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`)));
    socket.on('error', (error) => (done(true) ? undefined : reject(error)));
    socket.write(`${head}\r\n\r\n${body}`);
  });
}

/** The answer once its head and its whole body (by Content-Length, or the connection's end) are in. */
function parseAnswer(text: string, final: boolean): RawAnswer | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = text.slice(end + 4);
  const length = headers['content-length'];
  if (length !== undefined && Buffer.byteLength(body) < Number(length)) return undefined;
  if (length === undefined && !final) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}
