/**
 * A client for an OpenAI-compatible `POST {baseUrl}/embeddings` endpoint (Ollama, vLLM, TEI, a
 * hosted API), for the optional semantic ranking (issue 35.4). Configured by environment only;
 * without `TOOL_SEARCH_EMBEDDINGS_URL` there is no client and nothing is fetched.
 */

/** Where and how to ask for embeddings. */
export interface EmbeddingsConfig {
  /** The API base, e.g. `http://127.0.0.1:11434/v1`; `/embeddings` is appended. */
  baseUrl: URL;
  model: string;
  /** Sent as `Authorization: Bearer …` when set; never echoed in errors. */
  apiKey: string | null;
}

/** Bounds on one request and its answer, so a slow or hostile endpoint costs bounded time and memory. */
export const EMBEDDINGS_LIMITS = {
  timeoutMs: 10_000,
  batch: 64,
  inputChars: 2_000,
  responseBytes: 64 * 1024 * 1024,
  dimensions: 8_192,
} as const;

/** The environment variables read, by name. */
export const EMBEDDINGS_ENV = {
  url: 'TOOL_SEARCH_EMBEDDINGS_URL',
  model: 'TOOL_SEARCH_EMBEDDINGS_MODEL',
  apiKey: 'TOOL_SEARCH_EMBEDDINGS_API_KEY',
} as const;

/** The configuration the environment gives, or null when no URL is set (lexical ranking only); a bad value throws naming the variable. */
export function embeddingsConfigFromEnv(env: Readonly<Record<string, string | undefined>>): EmbeddingsConfig | null {
  const raw = env[EMBEDDINGS_ENV.url]?.trim();
  if (raw === undefined || raw === '') return null;
  let baseUrl: URL;
  try {
    baseUrl = new URL(raw);
  } catch {
    throw new Error(`${EMBEDDINGS_ENV.url} is not a URL`);
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:')
    throw new Error(`${EMBEDDINGS_ENV.url} must be an http: or https: URL`);
  if (baseUrl.username !== '' || baseUrl.password !== '')
    throw new Error(`${EMBEDDINGS_ENV.url} must not carry credentials; use ${EMBEDDINGS_ENV.apiKey}`);
  const model = env[EMBEDDINGS_ENV.model]?.trim();
  if (model === undefined || model === '')
    throw new Error(`${EMBEDDINGS_ENV.model} is required with ${EMBEDDINGS_ENV.url}`);
  const apiKey = env[EMBEDDINGS_ENV.apiKey]?.trim();
  return { baseUrl, model, apiKey: apiKey === undefined || apiKey === '' ? null : apiKey };
}

/** Turns texts into unit-length vectors, one per text, in order. */
export interface Embedder {
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** The embeddings endpoint as an Embedder: batches of EMBEDDINGS_LIMITS.batch, each answer checked and normalised. */
export class EmbeddingsClient implements Embedder {
  private readonly endpoint: string;

  constructor(
    private readonly config: EmbeddingsConfig,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.endpoint = new URL(`${config.baseUrl.pathname.replace(/\/$/, '')}/embeddings`, config.baseUrl).toString();
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let at = 0; at < texts.length; at += EMBEDDINGS_LIMITS.batch)
      vectors.push(...(await this.batch(texts.slice(at, at + EMBEDDINGS_LIMITS.batch))));
    return vectors;
  }

  private async batch(texts: readonly string[]): Promise<Float32Array[]> {
    const response = await this.fetchImpl(this.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(this.config.apiKey !== null && { authorization: `Bearer ${this.config.apiKey}` }),
      },
      body: JSON.stringify({
        model: this.config.model,
        input: texts.map((t) => t.slice(0, EMBEDDINGS_LIMITS.inputChars)),
      }),
      signal: AbortSignal.timeout(EMBEDDINGS_LIMITS.timeoutMs),
      redirect: 'error',
    });
    if (!response.ok) throw new Error(`embeddings endpoint answered HTTP ${response.status}`);
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > EMBEDDINGS_LIMITS.responseBytes) throw new Error('embeddings answer too large');
    const text = await response.text();
    if (text.length > EMBEDDINGS_LIMITS.responseBytes) throw new Error('embeddings answer too large');
    return vectorsOf(JSON.parse(text) as unknown, texts.length);
  }
}

/** The `data[].embedding` arrays of an answer, in `index` order, checked (count, finite numbers, one dimension) and scaled to unit length. */
function vectorsOf(body: unknown, expected: number): Float32Array[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== expected)
    throw new Error(`embeddings answer must hold ${expected} vectors in data`);
  const vectors: Float32Array[] = new Array<Float32Array>(expected);
  let dimensions = -1;
  data.forEach((item: unknown, i) => {
    const { embedding, index = i } = (item ?? {}) as { embedding?: unknown; index?: unknown };
    if (!Array.isArray(embedding) || embedding.length === 0 || embedding.length > EMBEDDINGS_LIMITS.dimensions)
      throw new Error('embeddings answer holds a missing or oversized embedding');
    if (dimensions !== -1 && embedding.length !== dimensions) throw new Error('embeddings differ in dimensions');
    dimensions = embedding.length;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected || vectors[index])
      throw new Error('embeddings answer holds a bad index');
    const vector = Float32Array.from(embedding, (x: unknown) => {
      if (typeof x !== 'number' || !Number.isFinite(x)) throw new Error('embeddings must be finite numbers');
      return x;
    });
    vectors[index] = normalised(vector);
  });
  return vectors;
}

function normalised(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}
