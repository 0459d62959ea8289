import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EMBEDDINGS_ENV, EmbeddingsClient, embeddingsConfigFromEnv } from './embeddings-client.js';
import { HybridSearch, ToolVectors } from './semantic-ranking.js';
import { ToolIndex } from './tool-index.js';

// A fake OpenAI-compatible embeddings server on 127.0.0.1: each text's vector counts the words of
// a few meaning groups, so "forget … Bob" lands near "delete … entities" with no word in common.
const GROUPS = [
  ['delete', 'deletes', 'forget', 'remove', 'erase'],
  ['entities', 'entity', 'person', 'bob', 'people'],
  ['issue', 'bug', 'ticket'],
  ['elevation', 'height', 'sea', 'altitude'],
];
const vectorOf = (text: string) => {
  const words = text.toLowerCase().split(/[^a-z]+/);
  return [...GROUPS.map((group) => words.filter((w) => group.includes(w)).length), 0.01];
};

interface Received {
  model: string;
  input: string[];
  authorization: string | undefined;
}
const received: Received[] = [];
let reply: ((input: string[]) => { status: number; body: unknown }) | null = null;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { model, input } = JSON.parse(body) as { model: string; input: string[] };
      received.push({ model, input, authorization: req.headers.authorization });
      const answer = reply?.(input) ?? {
        status: 200,
        // Answered in reverse order, each with its index, as the API allows.
        body: { data: input.map((text, index) => ({ index, embedding: vectorOf(text) })).reverse() },
      };
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((done) => server.close(() => done())));

beforeEach(() => {
  received.length = 0;
  reply = null;
});

const env = (extra: Record<string, string> = {}) => ({
  [EMBEDDINGS_ENV.url]: baseUrl,
  [EMBEDDINGS_ENV.model]: 'test-model',
  ...extra,
});
const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
const TOOLS = [
  tool('delete_entities', 'Delete entities and their relations from the knowledge graph.'),
  tool('create_issue', 'Create an issue in a repository.'),
  tool('maps_elevation', 'Get elevation data for locations on the earth.'),
  tool('read_graph', 'Read the entire knowledge graph.'),
];

describe('embeddingsConfigFromEnv', () => {
  it('is off (null) without a URL, so nothing is ever fetched', () => {
    expect(embeddingsConfigFromEnv({})).toBeNull();
    expect(embeddingsConfigFromEnv({ [EMBEDDINGS_ENV.url]: '  ', [EMBEDDINGS_ENV.model]: 'm' })).toBeNull();
  });

  it('names the variable at fault and never echoes a key', () => {
    expect(() => embeddingsConfigFromEnv({ [EMBEDDINGS_ENV.url]: 'not a url' })).toThrow(EMBEDDINGS_ENV.url);
    expect(() => embeddingsConfigFromEnv({ [EMBEDDINGS_ENV.url]: 'file:///etc/passwd' })).toThrow('http');
    expect(() => embeddingsConfigFromEnv({ [EMBEDDINGS_ENV.url]: baseUrl })).toThrow(EMBEDDINGS_ENV.model);
    expect(() =>
      embeddingsConfigFromEnv({ [EMBEDDINGS_ENV.url]: 'http://u:s3cret@127.0.0.1/v1', [EMBEDDINGS_ENV.model]: 'm' }),
    ).toThrow(/^(?!.*s3cret).*credentials/);
  });
});

describe('EmbeddingsClient against a local OpenAI-compatible server', () => {
  it('posts the model and the texts with the key as a bearer token, and returns unit vectors in input order', async () => {
    const client = new EmbeddingsClient(embeddingsConfigFromEnv(env({ [EMBEDDINGS_ENV.apiKey]: 'k-1' }))!);
    const [a, b] = await client.embed(['delete a bug', 'sea altitude']);
    expect(received).toEqual([
      { model: 'test-model', input: ['delete a bug', 'sea altitude'], authorization: 'Bearer k-1' },
    ]);
    expect(a![0]).toBeCloseTo(Math.SQRT1_2, 2);
    expect(a![2]).toBeCloseTo(Math.SQRT1_2, 2);
    expect(b![3]).toBeCloseTo(1, 2);
  });

  it('refuses a malformed answer: wrong count, non-numbers, mixed dimensions, an HTTP error', async () => {
    const client = new EmbeddingsClient(embeddingsConfigFromEnv(env({ [EMBEDDINGS_ENV.apiKey]: 'k-2' }))!);
    const answers: { status: number; body: unknown }[] = [
      { status: 200, body: { data: [] } },
      { status: 200, body: { data: [{ index: 0, embedding: ['x'] }] } },
      {
        status: 200,
        body: {
          data: [
            { index: 0, embedding: [1] },
            { index: 1, embedding: [1, 2] },
          ],
        },
      },
      {
        status: 200,
        body: {
          data: [
            { index: 0, embedding: [1] },
            { index: 0, embedding: [1] },
          ],
        },
      },
      { status: 500, body: { error: 'down' } },
    ];
    for (const answer of answers) {
      reply = () => answer;
      const error = await client.embed(['a', 'b']).catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).not.toContain('k-2');
    }
  });
});

describe('HybridSearch', () => {
  const index = ToolIndex.build(TOOLS);

  it('finds by meaning what no word of the query shares, fused with the lexical ranking', async () => {
    const client = new EmbeddingsClient(embeddingsConfigFromEnv(env())!);
    const query = 'forget everything about Bob';
    expect(index.search(query, 5).map((h) => h.name)).not.toContain('delete_entities');
    const hybrid = new HybridSearch(client, new ToolVectors(client));
    expect((await hybrid.search(index, query, 3))[0]?.name).toBe('delete_entities');
    // Lexical hits keep their place: an exact query still puts its tool first.
    expect((await hybrid.search(index, 'create an issue', 3))[0]?.name).toBe('create_issue');
  });

  it('embeds each definition once and again only when it changes', async () => {
    const client = new EmbeddingsClient(embeddingsConfigFromEnv(env())!);
    const vectors = new ToolVectors(client);
    const hybrid = new HybridSearch(client, vectors);
    await hybrid.search(index, 'remove a person', 3);
    expect(received.map((r) => r.input.length)).toEqual([1, TOOLS.length]);
    received.length = 0;
    await hybrid.search(index, 'remove a person', 3);
    expect(received.map((r) => r.input)).toEqual([['remove a person']]);
    received.length = 0;
    const changed = ToolIndex.build([...TOOLS.slice(1), tool('delete_entities', 'Erase people from the graph.')]);
    await hybrid.search(changed, 'remove a person', 3);
    expect(received.map((r) => r.input)).toEqual([
      ['remove a person'],
      ['delete_entities\n\nErase people from the graph.'],
    ]);
    expect(vectors.size).toBe(TOOLS.length + 1);
  });

  it('answers with the lexical ranking alone when the endpoint fails', async () => {
    const client = new EmbeddingsClient(embeddingsConfigFromEnv(env())!);
    const errors: Error[] = [];
    const hybrid = new HybridSearch(client, new ToolVectors(client), (error) => errors.push(error));
    reply = () => ({ status: 503, body: {} });
    const hits = await hybrid.search(index, 'create an issue', 2);
    expect(hits.map((h) => h.name)).toEqual(index.search('create an issue', 2).map((h) => h.name));
    expect(errors).toHaveLength(1);
  });
});
