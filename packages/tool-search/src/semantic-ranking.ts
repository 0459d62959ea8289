import { createHash } from 'node:crypto';
import { EmbeddingsClient, embeddingsConfigFromEnv, type Embedder } from './embeddings-client.js';
import { fieldsOf, type ListedTool } from './tool-fields.js';
import type { SearchHit, ToolIndex } from './tool-index.js';
import { trimOldest } from './bounded-map.js';

/** Reciprocal rank fusion's k (the usual 60): how fast a lower rank stops counting. */
export const FUSION = { k: 60, depth: 50 } as const;

/** The text a tool's vector is made of, and so what a change of which makes a new vector: name, title, description. */
export function definitionText(tool: ListedTool): string | null {
  const fields = fieldsOf(tool);
  return fields === null ? null : `${fields.name}\n${fields.title}\n${fields.description}`;
}

/**
 * Tool vectors by the SHA-256 of their definition text: a definition seen before (under any name,
 * for any caller) is not embedded again, a changed one gets a new digest and is embedded afresh.
 * At most `maxEntries` are kept, least recently used evicted.
 */
export class ToolVectors {
  private readonly vectors = new Map<string, Float32Array>();

  constructor(
    private readonly embedder: Embedder,
    private readonly maxEntries = 20_000,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
  }

  /** Each tool's vector, in order (null for a tool without a name); embeds those not held. */
  async of(tools: readonly ListedTool[]): Promise<(Float32Array | null)[]> {
    const missing = new Map<string, string>();
    const digests = tools.map((tool) => {
      const text = definitionText(tool);
      if (text === null) return null;
      const digest = createHash('sha256').update(text).digest('base64url');
      if (!this.vectors.has(digest)) missing.set(digest, text);
      return digest;
    });
    if (missing.size > 0) {
      const made = await this.embedder.embed([...missing.values()]);
      for (const [i, digest] of [...missing.keys()].entries()) this.keep(digest, vectorAt(made, i));
    }
    return digests.map((digest) => (digest === null ? null : this.touch(digest)));
  }

  /** How many vectors are held. */
  get size(): number {
    return this.vectors.size;
  }

  private keep(digest: string, vector: Float32Array): void {
    this.vectors.set(digest, vector);
    trimOldest(this.vectors, this.maxEntries);
  }

  private touch(digest: string): Float32Array | null {
    const vector = this.vectors.get(digest);
    if (vector === undefined) return null;
    this.vectors.delete(digest);
    this.vectors.set(digest, vector);
    return vector;
  }
}

/**
 * Lexical ranking fused with embeddings by reciprocal rank (issue 35.4): the lexical top
 * FUSION.depth and the FUSION.depth tools nearest the query's vector, each tool scored
 * Σ 1 / (FUSION.k + rank). When the embeddings endpoint fails, the lexical ranking answers alone.
 */
export class HybridSearch {
  /** Each index's tool vectors once gathered: an index's definitions never change, so later searches hash nothing. */
  private readonly byIndex = new WeakMap<object, (Float32Array | null)[]>();

  constructor(
    private readonly embedder: Embedder,
    private readonly vectors: ToolVectors,
    private readonly onError: (error: Error) => void = () => undefined,
  ) {}

  async search<T extends ListedTool>(index: ToolIndex<T>, query: string, limit: number): Promise<SearchHit<T>[]> {
    const lexical = index.search(query, FUSION.depth);
    let nearest: number[];
    try {
      const queryVector = vectorAt(await this.embedder.embed([query]), 0);
      nearest = rankByVector(queryVector, await this.vectorsOf(index));
    } catch (error) {
      this.onError(error as Error);
      return lexical.slice(0, limit);
    }
    const fused = new Map<string, { score: number; hit: SearchHit<T> }>();
    const add = (hit: SearchHit<T>, rank: number) => {
      const known = fused.get(hit.name);
      fused.set(hit.name, { score: (known?.score ?? 0) + 1 / (FUSION.k + rank + 1), hit: known?.hit ?? hit });
    };
    lexical.forEach((hit, rank) => add(hit, rank));
    // A near-duplicate folded into a lexical hit is not ranked again on its own.
    const folded = new Set(lexical.flatMap((hit) => hit.alsoFrom.map((also) => also.name)));
    nearest
      .map((doc) => index.hitAt(doc))
      .filter((hit) => !folded.has(hit.name))
      .slice(0, FUSION.depth)
      .forEach((hit, rank) => add(hit, rank));
    return [...fused.values()]
      .sort((a, b) => b.score - a.score || (a.hit.name < b.hit.name ? -1 : a.hit.name > b.hit.name ? 1 : 0))
      .slice(0, Math.max(0, limit))
      .map(({ score, hit }) => ({ ...hit, score }));
  }
  private async vectorsOf<T extends ListedTool>(index: ToolIndex<T>): Promise<(Float32Array | null)[]> {
    const known = this.byIndex.get(index);
    if (known !== undefined) return known;
    const vectors = await this.vectors.of(index.listed().map((entry) => entry.tool));
    this.byIndex.set(index, vectors);
    return vectors;
  }
}

/** The embedder's vector for its `i`th text; an embedder that answered fewer vectors than texts is an error (caught as any embedding failure). */
function vectorAt(vectors: readonly Float32Array[], i: number): Float32Array {
  const vector = vectors[i];
  if (vector === undefined) throw new Error(`the embedder answered ${vectors.length} vectors, text ${i + 1} has none`);
  return vector;
}

/** Tool positions by cosine similarity to the query (vectors are unit length), best first; tools without a vector left out. */
function rankByVector(query: Float32Array, vectors: readonly (Float32Array | null)[]): number[] {
  const scored: { doc: number; similarity: number }[] = [];
  vectors.forEach((vector, doc) => {
    if (vector === null || vector.length !== query.length) return;
    let dot = 0;
    for (let i = 0; i < vector.length; i++) dot += (vector[i] ?? 0) * (query[i] ?? 0);
    scored.push({ doc, similarity: dot });
  });
  return scored.sort((a, b) => b.similarity - a.similarity || a.doc - b.doc).map(({ doc }) => doc);
}

/** The hybrid search the environment configures (embeddings-client.ts), or null: lexical ranking only, nothing fetched. */
export function hybridSearchFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  onError?: (error: Error) => void,
): HybridSearch | null {
  const config = embeddingsConfigFromEnv(env);
  if (config === null) return null;
  const client = new EmbeddingsClient(config);
  return new HybridSearch(client, new ToolVectors(client), onError);
}
