// An event stream's HTTP response as the SSE writer's sink. The fan-out sends one event to every stream, so the
// bytes each stream puts on its socket are built once: a chunked response gets the event as a ready-made chunk
// (SseText.chunked) written straight to its socket, one write each, instead of Node building a size line and three
// writes per stream. Ending still goes through the response, which adds the last chunk.
import type { ServerResponse } from 'node:http';
import net from 'node:net';
import type { SseSink, SseText } from './sse.ts';

export class ResponseSink implements SseSink {
  /** The socket to write to directly, when the response's headers are out and nothing else is queued in it. */
  private readonly socket?: net.Socket;
  private readonly chunked: boolean;

  constructor(private readonly response: ServerResponse) {
    const socket = response.socket;
    // A response that is not on a real socket (an injected request), or holds output of its own (headers not yet on
    // the socket), is written the usual way.
    const direct = socket instanceof net.Socket && response.headersSent && response.writableLength === socket.writableLength;
    this.socket = direct ? socket : undefined;
    this.chunked = (response as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding === true;
    this.socket?.setNoDelay(true);
  }

  write(text: SseText): boolean {
    if (this.socket) return this.socket.write(this.chunked ? text.chunked : text.bytes);
    this.response.cork();
    const more = this.response.write(text.bytes);
    this.response.uncork();
    return more;
  }

  once(event: 'drain', listener: () => void): void {
    (this.socket ?? this.response).once(event, listener);
  }

  end(): void {
    this.response.end();
  }

  destroy(): void {
    this.response.destroy();
  }
}
