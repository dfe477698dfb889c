// A client of one repository over the OCI distribution API v2 (no Docker engine): manifests by tag or digest, blobs
// as streams whose sha256 is checked while they pass. HTTPS always, plain HTTP only for the registries an operator
// lists (--insecure-registries). Every request is cut off when it stalls or its pull's time is up (transfer-bounds.ts).
// Every failure is an ImageFailure that names the image and the registry's answer.
import { createHash } from 'node:crypto';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { ImageFailure, type RegistryAnswer } from './failures.ts';
import { manifestAccept } from './manifest.ts';
import { defaultTransferBounds, StallWatch, stalledDetail } from './transfer-bounds.ts';
import { basicAuthorization, parseChallenge, tokenOf, tokenUrl, type RegistryCredentials } from './registry-auth.ts';
import { registryApiHost, type ImageReference } from './reference.ts';

export interface RegistryAccess {
  /** Registries (`host:port` or `host`) reached over plain HTTP; all others over HTTPS. */
  insecureRegistries?: readonly string[];
  /** For the image's registry; sent to a token endpoint (Bearer) or with every request (Basic). */
  credentials?: RegistryCredentials;
  /** Milliseconds a manifest or token request may take (default 60 s); blobs stream as long as they do not stall. */
  timeoutMs?: number;
  /** Milliseconds any request may go without progress (src/images/transfer-bounds.ts; default 60 s). */
  stallMs?: number;
  /** Aborts every request, with its reason (an ImageFailure): the pull's time bound. */
  signal?: AbortSignal;
}

export interface FetchedManifest {
  bytes: Buffer;
  /** sha256 of the bytes: what a tag resolves to. */
  digest: string;
  contentType?: string;
}

const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const MAX_REDIRECTS = 5;

export function isInsecureRegistry(host: string, insecure: readonly string[] = []): boolean {
  const lower = host.toLowerCase();
  const bare = lower.replace(/:\d+$/, '');
  return insecure.some((entry) => {
    const e = entry.trim().toLowerCase();
    return e === lower || (e === bare && !e.includes(':'));
  });
}

export class RegistryClient {
  private authorization?: string;
  private readonly base: URL;

  constructor(
    private readonly reference: ImageReference,
    /** The reference as written, for messages. */
    private readonly image: string,
    private readonly access: RegistryAccess = {},
  ) {
    const host = registryApiHost(reference.registry);
    const scheme = isInsecureRegistry(reference.registry, access.insecureRegistries) ? 'http' : 'https';
    this.base = new URL(`${scheme}://${host}/v2/${reference.repository}/`);
  }

  failure(reason: ImageFailure['reason'], detail: string, answer?: RegistryAnswer): ImageFailure {
    return new ImageFailure(reason, this.image, this.reference.registry, detail, answer);
  }

  /** The manifest or index a tag or digest names, with the sha256 of its bytes. */
  async fetchManifest(tagOrDigest: string): Promise<FetchedManifest> {
    const response = await this.request(`manifests/${tagOrDigest}`, { accept: manifestAccept }, 'manifest');
    const bytes = await readLimited(response, MAX_MANIFEST_BYTES, () => this.failure('invalid', `the manifest is larger than ${MAX_MANIFEST_BYTES} bytes`));
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    const said = response.headers.get('docker-content-digest');
    if (tagOrDigest.startsWith('sha256:') && digest !== tagOrDigest) {
      throw this.failure('digest-mismatch', `the manifest asked for as ${tagOrDigest} has the digest ${digest}`);
    }
    if (said?.startsWith('sha256:') && said !== digest) {
      throw this.failure('digest-mismatch', `the registry named the manifest ${said} but its bytes have the digest ${digest}`);
    }
    return { bytes, digest, contentType: response.headers.get('content-type') ?? undefined };
  }

  /** A small blob (an image config) read whole and verified. */
  async fetchBlob(descriptor: { digest: string; size: number }, maxBytes: number): Promise<Buffer> {
    if (descriptor.size > maxBytes) throw this.failure('invalid', `the blob ${descriptor.digest} has ${descriptor.size} bytes, more than ${maxBytes}`);
    const chunks: Buffer[] = [];
    for await (const chunk of await this.openBlob(descriptor)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** A blob as a stream that fails at its end when the bytes are not the descriptor's size and sha256. */
  async openBlob(descriptor: { digest: string; size: number }): Promise<BlobStream> {
    const response = await this.request(`blobs/${descriptor.digest}`, {}, `blob ${descriptor.digest}`);
    if (!response.body) throw this.failure('registry-error', `the registry sent no body for the blob ${descriptor.digest}`, { status: response.status });
    const check = new DigestCheck(descriptor, (detail) => this.failure('digest-mismatch', detail));
    const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    body.on('error', (error) => check.destroy(error instanceof ImageFailure ? error : this.failure('unreachable', `the download of ${descriptor.digest} broke off: ${error.message}`)));
    check.on('close', () => body.destroy());
    return body.pipe(check);
  }

  /** A GET on the repository with the auth dance, redirects and the registry's errors turned into failures. */
  private async request(path: string, headers: Record<string, string>, what: string): Promise<Response> {
    const url = new URL(path, this.base);
    let response = await this.follow(url, headers, what);
    if (response.status === 401) {
      await response.body?.cancel();
      await this.authenticate(response.headers.get('www-authenticate'), what);
      response = await this.follow(url, headers, what);
    }
    if (response.ok) return response;
    const answer = await answerOf(response);
    if (response.status === 401 || response.status === 403) {
      const detail = this.access.credentials ? 'the registry refused the credentials for this image' : 'the registry needs credentials for this image (add them to the team: svc registry add)';
      throw this.failure('unauthorized', detail, answer);
    }
    if (response.status === 404) throw this.failure('unknown', `the registry has no ${what === 'manifest' ? `image ${this.reference.repository}:${this.reference.digest ?? this.reference.tag}` : what}`, answer);
    throw this.failure('registry-error', `the registry could not send the ${what}`, answer);
  }

  private async follow(start: URL, headers: Record<string, string>, what: string): Promise<Response> {
    let url = start;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const sameOrigin = url.origin === this.base.origin;
      const sent: Record<string, string> = { ...headers, 'user-agent': 'svc' };
      if (sameOrigin && this.authorization) sent.authorization = this.authorization;
      const response = await this.send(url, sent, what, what.startsWith('blob') ? undefined : this.timeoutMs);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return response;
      await response.body?.cancel();
      url = new URL(location, url);
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isInsecureRegistry(url.host, this.access.insecureRegistries))) {
        throw this.failure('registry-error', `the registry redirected the ${what} to ${url.origin}, which is not HTTPS`);
      }
    }
    throw this.failure('registry-error', `the registry redirected the ${what} more than ${MAX_REDIRECTS} times`);
  }

  private get timeoutMs(): number {
    return this.access.timeoutMs ?? 60_000;
  }

  /**
   * One request, cut off when it stalls (its answer or its body) or the pull's time is up; the body it answers
   * keeps being watched while the caller reads it.
   */
  private async send(url: URL, headers: Record<string, string>, what: string, timeoutMs: number | undefined): Promise<Response> {
    const stall = new AbortController();
    const stallMs = this.access.stallMs ?? defaultTransferBounds.stallMs;
    const watch = new StallWatch(stallMs, (bytes) => stall.abort(this.failure('stalled', stalledDetail(bytes, stallMs, what))));
    const signals = [stall.signal, ...(timeoutMs ? [AbortSignal.timeout(timeoutMs)] : []), ...(this.access.signal ? [this.access.signal] : [])];
    try {
      const response = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.any(signals) });
      watch.answered();
      return watchedBody(response, watch);
    } catch (error) {
      watch.stop();
      if (error instanceof ImageFailure) throw error;
      const reason = networkReason(error);
      // A plain-HTTP registry asked over HTTPS fails its TLS handshake: say why it was HTTPS
      const hint = url.protocol === 'https:' && /SSL|TLS|EPROTO/i.test(reason) ? '; svc speaks plain HTTP only to registries an operator lists in --insecure-registries' : '';
      throw this.failure('unreachable', `the registry ${url.host} cannot be reached over ${url.protocol === 'https:' ? 'HTTPS' : 'HTTP'}: ${reason}${hint}`);
    }
  }

  private async authenticate(header: string | null, what: string): Promise<void> {
    const challenge = parseChallenge(header);
    const credentials = this.access.credentials;
    if (challenge?.scheme === 'basic' && credentials) {
      this.authorization = basicAuthorization(credentials);
      return;
    }
    if (challenge?.scheme !== 'bearer' || !challenge.params.realm) {
      const detail = credentials ? `the registry asks for ${header ?? 'an unknown kind of'} authentication, which svc does not speak` : 'the registry needs credentials for this image (add them to the team: svc registry add)';
      throw this.failure('unauthorized', detail, { status: 401 });
    }
    let url: URL;
    try {
      url = tokenUrl(challenge, this.reference.repository);
    } catch {
      throw this.failure('registry-error', `the registry's token address "${challenge.params.realm}" is not a URL`);
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isInsecureRegistry(this.reference.registry, this.access.insecureRegistries))) {
      throw this.failure('registry-error', `the registry's token address ${url.origin} is not HTTPS`);
    }
    const headers: Record<string, string> = { 'user-agent': 'svc', accept: 'application/json' };
    if (credentials) headers.authorization = basicAuthorization(credentials);
    const response = await this.send(url, headers, `token for the ${what}`, this.timeoutMs);
    if (!response.ok) {
      const answer = await answerOf(response);
      const detail = credentials ? 'the token service refused the credentials' : `the token service refused anonymous access to the ${what}`;
      throw this.failure('unauthorized', detail, answer);
    }
    const token = tokenOf(
      await response.json().catch((error: unknown) => {
        if (error instanceof ImageFailure) throw error;
        return undefined;
      }),
    );
    if (!token) throw this.failure('registry-error', 'the token service answered without a token');
    this.authorization = `Bearer ${token}`;
  }
}

/** A blob's bytes as they arrive, checked; `hashMs` is the time spent hashing them so far (bench/images shows it). */
export type BlobStream = Readable & { readonly hashMs: number };

/** Hashes and counts what passes; fails on more bytes than the descriptor's size, or another digest at the end. */
class DigestCheck extends Transform {
  private readonly hash = createHash('sha256');
  private bytes = 0;
  hashMs = 0;

  constructor(
    private readonly descriptor: { digest: string; size: number },
    private readonly mismatch: (detail: string) => Error,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.descriptor.size) return callback(this.mismatch(`the blob ${this.descriptor.digest} has more bytes than the ${this.descriptor.size} its manifest says`));
    const started = performance.now();
    this.hash.update(chunk);
    this.hashMs += performance.now() - started;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const digest = `sha256:${this.hash.digest('hex')}`;
    if (this.bytes !== this.descriptor.size) return callback(this.mismatch(`the blob ${this.descriptor.digest} has ${this.bytes} bytes, its manifest says ${this.descriptor.size}`));
    if (digest !== this.descriptor.digest) return callback(this.mismatch(`the blob ${this.descriptor.digest} arrived with the digest ${digest}`));
    callback();
  }
}

/** The response with its body counted by `watch` as it is read; the watch stops at the body's end. */
function watchedBody(response: Response, watch: StallWatch): Response {
  if (!response.body || [204, 205, 304].includes(response.status)) {
    watch.stop();
    return response;
  }
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        watch.progress(chunk.byteLength);
        controller.enqueue(chunk);
      },
      flush() {
        watch.stop();
      },
    }),
  );
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
}

async function readLimited(response: Response, limit: number, tooLarge: () => Error): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  if (!response.body) return Buffer.alloc(0);
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > limit) throw tooLarge();
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** The status and the first error of a registry's JSON error body (`{"errors":[{"code","message"}]}`). */
async function answerOf(response: Response): Promise<RegistryAnswer> {
  const answer: RegistryAnswer = { status: response.status };
  const text = await readLimited(response, 65536, () => new Error('too large')).then((b) => b.toString('utf8')).catch(() => '');
  try {
    const first = JSON.parse(text)?.errors?.[0];
    if (typeof first?.code === 'string') answer.code = first.code;
    if (typeof first?.message === 'string') answer.message = first.message;
  } catch {
    const line = text.trim().split('\n')[0]?.slice(0, 200);
    if (line) answer.message = line;
  }
  return answer;
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if ((error as Error).name === 'TimeoutError') return 'no answer in time';
  const message = (cause?.message ?? (error as Error).message).split('\n')[0].trim();
  // OpenSSL's line (`805C...:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:file:line:`): its reason
  const openssl = /:error:[0-9A-F]+:[^:]*routines:[^:]*:([^:]+)/.exec(message);
  return [cause?.code, openssl ? openssl[1] : message].filter(Boolean).join(' ');
}
