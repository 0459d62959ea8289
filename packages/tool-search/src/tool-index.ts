import { queryTerms } from './query-terms.js';
import { RANKING, SEARCH_LIMITS, type Field } from './ranking.js';
import { terms } from './terms.js';
import { FIELD_LIMITS, fieldsOf, type ListedTool } from './tool-fields.js';

export { RANKING, SEARCH_LIMITS } from './ranking.js';

/** One ranked result: the tool as it was indexed and its score (higher is better). */
export interface SearchHit<T> {
  tool: T;
  name: string;
  score: number;
}

const FIELDS = Object.keys(RANKING.fields) as Field[];

/** A term's documents and, for each, its precomputed BM25F contribution (idf × saturated tf). */
interface Posting {
  docs: number[];
  weights: number[];
}

/**
 * An inverted index over a set of tool definitions, ranked by BM25F over name, title,
 * description and input schema text. Built once per tool set (`build`), then searched without
 * allocation beyond the result; pure: no I/O, no clock, same input same order (ties by name).
 */
export class ToolIndex<T extends ListedTool> {
  private constructor(
    private readonly tools: readonly T[],
    private readonly names: readonly string[],
    private readonly postings: ReadonlyMap<string, Posting>,
  ) {}

  /** Indexes up to SEARCH_LIMITS.tools tools with a string name; a repeated name keeps its first tool. */
  static build<T extends ListedTool>(tools: readonly T[]): ToolIndex<T> {
    const kept: T[] = [];
    const docs: Map<string, number>[][] = [];
    const seen = new Set<string>();
    for (const tool of tools) {
      if (kept.length >= SEARCH_LIMITS.tools) break;
      const fields = fieldsOf(tool);
      if (fields === null || seen.has(fields.name)) continue;
      seen.add(fields.name);
      kept.push(tool);
      docs.push(FIELDS.map((field) => counts(terms(fields[field], FIELD_LIMITS.textChars))));
    }
    return new ToolIndex(kept, [...seen], postingsOf(docs));
  }

  /** How many tools were indexed. */
  get size(): number {
    return this.tools.length;
  }

  /**
   * The best `limit` tools for `query` (at most SEARCH_LIMITS.results), by score then name.
   * Tools matching no query term are not returned; a query without terms returns nothing.
   */
  search(query: string, limit: number): SearchHit<T>[] {
    const wanted = Number.isFinite(limit) ? Math.min(Math.max(Math.trunc(limit), 0), SEARCH_LIMITS.results) : 0;
    if (wanted === 0) return [];
    const scores = new Float64Array(this.tools.length);
    const credited = new Int32Array(this.tools.length);
    const credit = new Float64Array(this.tools.length);
    const touched: number[] = [];
    let answerable = 0;
    // Strongest terms first, so a concept's first match in a tool is its best: the credit it gets.
    const looked = [...queryTerms(query)].sort(([a, x], [b, y]) => y.weight - x.weight || compareNames(a, b));
    for (const [term, { weight, concepts }] of looked) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      answerable |= concepts;
      const share = Math.min(1, weight / RANKING.vocabularyWeight);
      for (let i = 0; i < posting.docs.length; i++) {
        const doc = posting.docs[i]!;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += weight * posting.weights[i]!;
        const fresh = concepts & ~credited[doc]!;
        if (fresh !== 0) {
          credit[doc]! += share * bitCount(fresh);
          credited[doc]! |= fresh;
        }
      }
    }
    const total = bitCount(answerable);
    for (const doc of touched) scores[doc]! *= ((1 + credit[doc]!) / (1 + total)) ** RANKING.coverageExponent;
    touched.sort((a, b) => scores[b]! - scores[a]! || compareNames(this.names[a]!, this.names[b]!));
    return touched
      .slice(0, wanted)
      .map((doc) => ({ tool: this.tools[doc]!, name: this.names[doc]!, score: scores[doc]! }));
  }
}

/** Per-document, per-field term counts → each term's posting with its BM25F weight. */
function postingsOf(docs: Map<string, number>[][]): Map<string, Posting> {
  const average = FIELDS.map(
    (_, f) => docs.reduce((sum, fields) => sum + lengthOf(fields[f]!), 0) / Math.max(docs.length, 1),
  );
  const saturated = new Map<string, { docs: number[]; tf: number[] }>();
  docs.forEach((fields, doc) => {
    const tf = new Map<string, number>();
    FIELDS.forEach((field, f) => {
      const { weight, b } = RANKING.fields[field];
      const norm = average[f]! > 0 ? 1 - b + (b * lengthOf(fields[f]!)) / average[f]! : 1;
      for (const [term, count] of fields[f]!) tf.set(term, (tf.get(term) ?? 0) + (weight * count) / norm);
    });
    for (const [term, value] of tf) {
      const entry = saturated.get(term) ?? { docs: [], tf: [] };
      entry.docs.push(doc);
      entry.tf.push(value);
      saturated.set(term, entry);
    }
  });
  const n = docs.length;
  const { k1 } = RANKING;
  const postings = new Map<string, Posting>();
  for (const [term, entry] of saturated) {
    const df = entry.docs.length;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    postings.set(term, { docs: entry.docs, weights: entry.tf.map((tf) => (idf * tf * (k1 + 1)) / (k1 + tf)) });
  }
  return postings;
}

/** Set bits of a 32-bit integer. */
function bitCount(bits: number): number {
  let count = 0;
  for (let rest = bits >>> 0; rest !== 0; rest &= rest - 1) count += 1;
  return count;
}

function counts(list: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const term of list) map.set(term, (map.get(term) ?? 0) + 1);
  return map;
}

const lengthOf = (fieldCounts: Map<string, number>): number => {
  let total = 0;
  for (const count of fieldCounts.values()) total += count;
  return total;
};

/** Code-unit order, not locale order: the same on every machine. */
const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
