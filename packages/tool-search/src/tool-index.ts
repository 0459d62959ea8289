import { allWords, stem, terms, wordPairs, words } from './terms.js';
import { relatedTerms } from './thesaurus.js';
import { verbSynonyms } from './wordnet.js';
import { vocabularyMatch } from './vocabulary-expansion.js';
import { queryEntities } from './query-entities.js';
import { FIELD_LIMITS, fieldsOf, type ListedTool, type ToolFields } from './tool-fields.js';

/** One ranked result: the tool as it was indexed and its score (higher is better). */
export interface SearchHit<T> {
  tool: T;
  name: string;
  score: number;
}

/** Bounds on a query and an index: longer queries are truncated, extra tools are not indexed. */
export const SEARCH_LIMITS = { queryChars: 1_000, queryTerms: 32, results: 50, tools: 10_000 } as const;

type Field = keyof ToolFields;

/**
 * BM25F parameters: each field's weight and length normalisation (b), one saturation (k1). A
 * name is short and says the most; parameter text is long and says the least. Related terms
 * (thesaurus.ts) count at `relatedWeight` of the query's own words, WordNet verb synonyms
 * (wordnet.ts) at `wordnetWeight`, the software-tools vocabulary's tool words
 * (software-vocabulary.ts) at `vocabularyWeight`. Chosen on the benchmark's development queries
 * only.
 */
export const RANKING = {
  k1: 1.2,
  fields: {
    name: { weight: 2, b: 0.5 },
    title: { weight: 2, b: 0.5 },
    description: { weight: 1, b: 0.75 },
    parameters: { weight: 0.6, b: 0.75 },
  } satisfies Record<Field, { weight: number; b: number }>,
  relatedWeight: 0.6,
  wordnetWeight: 0.3,
  vocabularyWeight: 0.7,
  /** A query word that only makes up a multi-word vocabulary phrase ("get" in "get rid of"): the phrase's tool words speak for it. */
  idiomWordWeight: 0.3,
  /** The kind a pasted value's shape names ("PAY-9" → issue, "#ops" → channel; query-entities.ts). */
  entityWeight: 0.7,
} as const;

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
    const touched: number[] = [];
    for (const [term, queryWeight] of queryTerms(query)) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      for (let i = 0; i < posting.docs.length; i++) {
        const doc = posting.docs[i]!;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += queryWeight * posting.weights[i]!;
      }
    }
    touched.sort((a, b) => scores[b]! - scores[a]! || compareNames(this.names[a]!, this.names[b]!));
    return touched.slice(0, wanted).map((doc) => ({ tool: this.tools[doc]!, name: this.names[doc]!, score: scores[doc]! }));
  }
}

/** Per-document, per-field term counts → each term's posting with its BM25F weight. */
function postingsOf(docs: Map<string, number>[][]): Map<string, Posting> {
  const average = FIELDS.map((_, f) => docs.reduce((sum, fields) => sum + lengthOf(fields[f]!), 0) / Math.max(docs.length, 1));
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

/**
 * The query's distinct terms (at most SEARCH_LIMITS.queryTerms) at weight 1, or at
 * RANKING.idiomWordWeight when they only make up a vocabulary idiom ("get" and "rid" of "get rid
 * of"); their thesaurus terms at RANKING.relatedWeight, the software-tools vocabulary's tool words
 * for its phrases at RANKING.vocabularyWeight, and the WordNet verb synonyms of its words and
 * two-word verbs ("bring back", "pass … along") at RANKING.wordnetWeight; a term keeps its highest weight.
 */
function queryTerms(text: string): Map<string, number> {
  const bounded = text.length > SEARCH_LIMITS.queryChars ? text.slice(0, SEARCH_LIMITS.queryChars) : text;
  // Pasted values ("PAY-9", "jo@acme.io") are read by their shape, not split into words.
  const entities = queryEntities(bounded);
  const query = entities.rest;
  const raw = [...new Set(words(query, SEARCH_LIMITS.queryChars))].slice(0, SEARCH_LIMITS.queryTerms);
  const vocabulary = vocabularyMatch(query, SEARCH_LIMITS.queryChars);
  const weights = new Map<string, number>();
  for (const word of raw) {
    const term = stem(word);
    const weight = vocabulary.idiomWords.has(term) ? RANKING.idiomWordWeight : 1;
    if ((weights.get(term) ?? 0) < weight) weights.set(term, weight);
  }
  const own = [...weights.keys()];
  const add = (term: string, weight: number) => {
    if ((weights.get(term) ?? 0) < weight) weights.set(term, weight);
  };
  for (const term of own) for (const related of relatedTerms(term)) add(related, RANKING.relatedWeight);
  for (const term of vocabulary.targets) add(term, RANKING.vocabularyWeight);
  // Two-word verbs are looked up with stop words kept: particles ("on", "in") are stop words.
  const phrases = [...raw, ...wordPairs(allWords(query, SEARCH_LIMITS.queryChars).slice(0, 2 * SEARCH_LIMITS.queryTerms))];
  for (const phrase of phrases) for (const synonym of verbSynonyms(phrase)) for (const term of terms(synonym, SEARCH_LIMITS.queryChars)) add(term, RANKING.wordnetWeight);
  for (const term of terms(entities.words.join(' '), SEARCH_LIMITS.queryChars)) add(term, RANKING.entityWeight);
  return weights;
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
