// The router passes a WebSocket's bytes through without reading them (proxy.ts). To close one with a reason the
// browser can show (its caller lost the right, stream-guard.ts), a close frame must start where a frame of the
// upstream ended: this follows the frame boundaries of the bytes sent to the client (RFC 6455 5.2), nothing more.

/** Where the bytes sent so far end: between frames, or inside a frame's head or payload. */
export class FrameBoundary {
  private head: number[] = [];
  private remaining = 0;

  /** Whether the bytes so far end exactly at a frame's end. */
  get atBoundary(): boolean {
    return this.remaining === 0 && this.head.length === 0;
  }

  feed(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - i);
        this.remaining -= take;
        i += take;
        continue;
      }
      this.head.push(chunk[i++]);
      const payload = headPayloadLength(this.head);
      if (payload !== undefined) {
        this.head = [];
        this.remaining = payload;
      }
    }
  }
}

/** The payload length once `head` holds a whole frame head, else undefined. */
function headPayloadLength(head: number[]): number | undefined {
  if (head.length < 2) return undefined;
  const short = head[1] & 0x7f;
  const masked = (head[1] & 0x80) !== 0;
  const extended = short === 126 ? 2 : short === 127 ? 8 : 0;
  if (head.length < 2 + extended + (masked ? 4 : 0)) return undefined;
  let length = short;
  if (extended > 0) {
    length = 0;
    for (let k = 0; k < extended; k++) length = length * 256 + head[2 + k];
  }
  return length;
}

/** A close frame as a server sends it (unmasked): the code, then the reason (at most 123 bytes in all). */
export function closeFrame(code: number, reason: string): Buffer {
  let text = Buffer.from(reason);
  if (text.length > 123) text = text.subarray(0, 123);
  const payload = Buffer.alloc(2 + text.length);
  payload.writeUInt16BE(code, 0);
  text.copy(payload, 2);
  return Buffer.concat([Buffer.from([0x88, payload.length]), payload]);
}
