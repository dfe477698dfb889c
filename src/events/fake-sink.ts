// A stand-in for an HTTP response in the tests of the SSE writer and the fan-out.
import assert from 'node:assert/strict';
import type { SseSink, SseText } from './sse.ts';

/** A response that accepts writes until `full` is set, then asks to wait for 'drain'. */
export class FakeSink implements SseSink {
  readonly chunks: string[] = [];
  /** What was written, as given (streams sent the same event share one). */
  readonly texts: SseText[] = [];
  full = false;
  ended = false;
  destroyed = false;
  private drainListeners: Array<() => void> = [];

  write(text: SseText): boolean {
    assert.ok(!this.ended && !this.destroyed, 'no write after the end');
    this.chunks.push(text.text);
    this.texts.push(text);
    return !this.full;
  }
  once(_event: 'drain', listener: () => void): void {
    this.drainListeners.push(listener);
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
  drain(): void {
    this.full = false;
    for (const listener of this.drainListeners.splice(0)) listener();
  }
  get text(): string {
    return this.chunks.join('');
  }
  /** Event names in order (`ping` for comments). */
  get events(): string[] {
    return [...this.text.matchAll(/^(?:event: (\S+)|: (ping))$/gm)].map((m) => m[1] ?? m[2]);
  }
}
