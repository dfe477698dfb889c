// A small HTTP client for tests: a key or a browser session (with Svc-CSRF on changes).
import assert from 'node:assert/strict';

export interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  /** Leave out Svc-CSRF on a cookie request. */
  noCsrf?: boolean;
  /** Gives up on the request (a deadline in tests that must see every request answer). */
  signal?: AbortSignal;
}

/** fetch failed because the connection closed under the request ("other side closed", a reset), not for its answer. */
function connectionLost(error: Error & { cause?: { code?: string } }): boolean {
  return error.name === 'TypeError' && ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'].includes(error.cause?.code ?? '');
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly auth: { token?: string; cookie?: string; userId?: number; email?: string } = {},
  ) {}

  withToken(token: string): ApiClient {
    return new ApiClient(this.baseUrl, { ...this.auth, token, cookie: undefined });
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = {};
    if (this.auth.token) headers.authorization = `Bearer ${this.auth.token}`;
    if (this.auth.cookie) {
      headers.cookie = `__Host-svc_session=${this.auth.cookie}`;
      if (!options.noCsrf) headers['svc-csrf'] = '1';
    }
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    } else if (options.rawBody !== undefined) body = options.rawBody;
    Object.assign(headers, options.headers);
    const send = () => fetch(`${this.baseUrl}/api/v1${path}`, { method, headers, body, signal: options.signal });
    // A kept-alive connection that the other side closed as the request went out on it (nginx closes its idle ones
    // at every reload, so at every routing change) failed before any answer: the request is sent once more, on a new
    // connection, as browsers do for any method on a reused connection closed before an answer (nginx closes only
    // connections with no request in progress). A server that is really gone fails the second time too.
    const response = await send().catch((error: Error & { cause?: { code?: string } }) => {
      if (!options.signal?.aborted && connectionLost(error)) return send();
      throw error;
    });
    const text = await response.text();
    let parsed: unknown = text;
    if (/json/.test(response.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...options, body });
  }
  put<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('PUT', path, { ...options, body });
  }
  patch<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('PATCH', path, { ...options, body });
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }

  async signInWithLink(token: string): Promise<ApiClient> {
    const answer = await this.post('/sessions', { link_token: token });
    assert.equal(answer.status, 201, answer.text);
    const cookie = /__Host-svc_session=([^;]+)/.exec(answer.headers.get('set-cookie') ?? '')![1];
    return new ApiClient(this.baseUrl, { cookie, userId: answer.body.user.id, email: answer.body.user.email });
  }

  /** A key minted with this client's session. */
  async mintKey(name = 'test key'): Promise<ApiClient> {
    const answer = await this.post('/me/api-keys', { name });
    assert.equal(answer.status, 201, answer.text);
    return new ApiClient(this.baseUrl, { token: answer.body.token, userId: this.auth.userId, email: this.auth.email });
  }
}

/** As an administrator: create a user and return a session client and a key client for them. */
export async function createPerson(admin: ApiClient, email: string): Promise<{ session: ApiClient; key: ApiClient; id: number }> {
  const created = await admin.post('/users', { email, name: email.split('@')[0] });
  assert.equal(created.status, 201, created.text);
  const link = await admin.post(`/users/${created.body.id}/sign-in-links`);
  assert.equal(link.status, 201, link.text);
  const anonymous = new ApiClient(admin.baseUrl);
  const session = await anonymous.signInWithLink(new URL(link.body.url).hash.replace('#token=', ''));
  return { session, key: await session.mintKey(), id: created.body.id };
}

export function assertProblem(answer: Answer, status: number, type: string): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.headers.get('content-type')?.split(';')[0], 'application/problem+json', answer.text);
  assert.equal(answer.body.type, `urn:svc:problem:${type}`, answer.text);
  assert.equal(answer.body.status, status);
  assert.equal(typeof answer.body.title, 'string');
}
