// HTTP/1.1 as the router speaks it to upstreams (RFC 9112): the request head it writes, the answer's head it reads
// (status, headers without hop-by-hop ones, how the body is framed, whether the connection can be kept) and a
// decoder of chunked bodies. Pure: proxy.ts does the I/O.
import type { IncomingHttpHeaders } from 'node:http';

/** Headers that concern one connection only; never passed on (RFC 9110 7.6.1). */
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Lower-cased names listed in a `Connection` header (they are hop-by-hop too). */
export function connectionNames(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return String(value)
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
}

/** The request head, latin1 text; `chunked` when the body is sent with chunked framing. */
export function requestHead(method: string, target: string, headers: IncomingHttpHeaders, chunked: boolean): string {
  let head = `${method} ${target} HTTP/1.1\r\n`;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value === 'string') head += `${name}: ${value}\r\n`;
    else for (const one of value) head += `${name}: ${one}\r\n`;
  }
  if (chunked) head += 'transfer-encoding: chunked\r\n';
  return `${head}connection: keep-alive\r\n\r\n`;
}

/** How the body of an answer is delimited: none, `Content-Length`, chunked, or the end of the connection. */
export type Framing = 'none' | 'length' | 'chunked' | 'close';

export interface ResponseHead {
  status: number;
  /** The reason phrase; empty when the upstream sent none. */
  message: string;
  /** Name, value, name, value... as sent (for writeHead), without hop-by-hop headers. */
  headers: string[];
  framing: Framing;
  /** The body's length with `length` framing. */
  length: number;
  /** The connection may carry another request after this answer. */
  keepAlive: boolean;
}

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: ([^\r\n]*))?$/;
const CONTENT_LENGTH = /^\d{1,15}$/;

/** Without leading and trailing spaces and tabs (HTTP's OWS; String.trim would take other bytes too). */
function trimSpaces(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/**
 * Reads an answer's head (latin1 text up to, without, the blank line) to a request of `method`; undefined when it
 * is malformed: no status line, folded or nameless header lines, differing or non-numeric `Content-Length`s.
 */
export function parseResponseHead(text: string, method: string | undefined): ResponseHead | undefined {
  const lines = text.split('\r\n');
  const statusLine = STATUS_LINE.exec(lines[0]);
  if (!statusLine) return undefined;
  const status = Number(statusLine[2]);
  const message = statusLine[3] ?? '';
  const names: string[] = [];
  const values: string[] = [];
  let connection = '';
  let length: string | undefined;
  let encoding: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(':');
    const first = line.charCodeAt(0);
    if (colon <= 0 || first === 32 || first === 9) return undefined;
    const name = line.slice(0, colon);
    const value = trimSpaces(line.slice(colon + 1));
    const lower = name.toLowerCase();
    if (lower === 'content-length') {
      if (!CONTENT_LENGTH.test(value) || (length !== undefined && length !== value)) return undefined;
      if (length !== undefined) continue; // the same value twice: pass it on once
      length = value;
    } else if (lower === 'transfer-encoding') {
      encoding = encoding === undefined ? value : `${encoding}, ${value}`;
    } else if (lower === 'connection') {
      connection = connection ? `${connection}, ${value}` : value;
    }
    names.push(name);
    values.push(value);
  }
  const named = connectionNames(connection);
  const headers: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const lower = names[i].toLowerCase();
    if (HOP_BY_HOP.has(lower) || (named.length > 0 && named.includes(lower))) continue;
    // beside Transfer-Encoding, a Content-Length does not tell the body's length (RFC 9112 6.3): leave it out
    if (encoding !== undefined && lower === 'content-length') continue;
    headers.push(names[i], values[i]);
  }
  const keepAlive = statusLine[1] === '1' ? !named.includes('close') : named.includes('keep-alive');
  if (method === 'HEAD' || status === 204 || status === 304 || status < 200) return { status, message, headers, framing: 'none', length: 0, keepAlive };
  if (encoding !== undefined) {
    const chunked = /(?:^|,)[ \t]*chunked[ \t]*$/i.test(encoding);
    // both framings in one answer is how answers are smuggled: read this one, never reuse the connection
    return { status, message, headers, framing: chunked ? 'chunked' : 'close', length: 0, keepAlive: keepAlive && chunked && length === undefined };
  }
  if (length !== undefined) {
    const bytes = Number(length);
    return { status, message, headers, framing: bytes === 0 ? 'none' : 'length', length: bytes, keepAlive };
  }
  return { status, message, headers, framing: 'close', length: 0, keepAlive: false };
}

/** What ChunkedDecoder.feed found: more is needed, or the body is malformed. Otherwise the offset after the body. */
export const NEED_MORE = -1;
export const MALFORMED = -2;

const CHUNK_SIZE = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/;
const MAX_LINE = 4096;

/** Decodes a chunked body across reads (RFC 9112 7.1): data goes to `onData`; extensions and trailers are dropped. */
export class ChunkedDecoder {
  private state: 'size' | 'data' | 'data-end' | 'trailer' = 'size';
  private remaining = 0;
  private line = '';

  /** Reads `data` from `from`: NEED_MORE, MALFORMED, or the offset in `data` just after the body's end. */
  feed(data: Buffer, from: number, onData: (chunk: Buffer) => void): number {
    let at = from;
    while (at < data.length) {
      if (this.state === 'data') {
        const take = Math.min(this.remaining, data.length - at);
        onData(data.subarray(at, at + take));
        this.remaining -= take;
        at += take;
        if (this.remaining === 0) this.state = 'data-end';
        continue;
      }
      const newline = data.indexOf(10, at);
      const end = newline < 0 ? data.length : newline + 1;
      this.line += data.toString('latin1', at, end);
      at = end;
      if (this.line.length > MAX_LINE) return MALFORMED;
      if (newline < 0) return NEED_MORE;
      const line = this.line.slice(0, this.line.endsWith('\r\n') ? -2 : -1);
      this.line = '';
      if (this.state === 'data-end') {
        if (line !== '') return MALFORMED;
        this.state = 'size';
      } else if (this.state === 'size') {
        const size = CHUNK_SIZE.exec(line);
        if (!size) return MALFORMED;
        this.remaining = parseInt(size[1], 16);
        this.state = this.remaining === 0 ? 'trailer' : 'data';
      } else if (line === '') {
        return at; // the blank line after the trailers: the end
      }
    }
    return NEED_MORE;
  }
}
