// Bodies are whatever JSON the gateway answered; the suite asserts on their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: Json;
}

export interface ApiRequest {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A black-box HTTP client of one gateway base URL: JSON in, status + parsed JSON out. */
export class GatewayApi {
  constructor(readonly baseUrl: string) {}

  async call(method: string, path: string, request: ApiRequest = {}): Promise<ApiAnswer> {
    const headers: Record<string, string> = { ...request.headers };
    if (request.token) headers.authorization = `Bearer ${request.token}`;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let body: Json = text;
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text for the failure message
    }
    return { status: res.status, headers: res.headers, body };
  }

  get = (path: string, request?: ApiRequest) => this.call('GET', path, request);
  post = (path: string, request?: ApiRequest) => this.call('POST', path, request);
  put = (path: string, request?: ApiRequest) => this.call('PUT', path, request);
  delete = (path: string, request?: ApiRequest) => this.call('DELETE', path, request);

  /** Like call(), but anything other than `expected` throws with the answer, for setup steps. */
  async must(expected: number, method: string, path: string, request?: ApiRequest): Promise<Json> {
    const answer = await this.call(method, path, request);
    if (answer.status !== expected)
      throw new Error(`${method} ${path}: expected ${expected}, got ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  async login(email: string, password: string): Promise<{ token: string; userId: string }> {
    const body = await this.must(200, 'POST', '/api/v1/auth/login', { body: { email, password } });
    return { token: body.token, userId: body.user.id };
  }
}
