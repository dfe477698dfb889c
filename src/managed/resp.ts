// RESP2, the protocol Redis speaks, as pure functions: a command becomes an array of bulk strings, and a reply is
// read from the bytes received so far (undefined while it is incomplete). redis-client.ts sends and receives.

/** An error reply (`-WRONGPASS invalid username-password pair`): `code` is its first word. */
export class RespError {
  constructor(readonly message: string) {}
  get code(): string {
    return this.message.split(' ', 1)[0];
  }
}

export type RespValue = string | number | null | RespError | RespValue[];

export function encodeCommand(args: readonly string[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.from(arg, 'utf8');
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** The reply that starts at `offset` of `buffer` and where the next one starts, or undefined if it is not all there. */
export function decodeReply(buffer: Buffer, offset = 0): { value: RespValue; next: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buffer[offset]);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const afterLine = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, next: afterLine };
    case '-':
      return { value: new RespError(line), next: afterLine };
    case ':':
      return { value: Number(line), next: afterLine };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, next: afterLine };
      if (buffer.length < afterLine + length + 2) return undefined;
      return { value: buffer.toString('utf8', afterLine, afterLine + length), next: afterLine + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, next: afterLine };
      const items: RespValue[] = [];
      let next = afterLine;
      for (let i = 0; i < count; i++) {
        const item = decodeReply(buffer, next);
        if (!item) return undefined;
        items.push(item.value);
        next = item.next;
      }
      return { value: items, next };
    }
    default:
      throw new Error(`not a RESP reply: ${JSON.stringify(buffer.toString('utf8', offset, Math.min(buffer.length, offset + 40)))}`);
  }
}
