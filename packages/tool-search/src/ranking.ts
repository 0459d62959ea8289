import type { ToolFields } from './tool-fields.js';

/** Bounds on a query and an index: longer queries are truncated, extra tools are not indexed. */
export const SEARCH_LIMITS = { queryChars: 1_000, queryTerms: 32, results: 50, tools: 10_000, alsoFrom: 16 } as const;

/** A searched field of a tool: its own text, and its provider's name and title (given by the caller). */
export type Field = keyof ToolFields | 'provider';

/**
 * BM25F parameters: each field's weight and length normalisation (b), one saturation (k1). A
 * name is short and says the most; parameter text is long and says the least. Related terms
 * (thesaurus.ts) count at `relatedWeight` of the query's own words, WordNet verb synonyms
 * (wordnet.ts) at `wordnetWeight`, the software-tools vocabulary's tool words
 * (software-vocabulary.ts) at `vocabularyWeight`. A tool's score is then scaled by the share of
 * the query's concepts it matches (`coverageExponent`). Chosen on the benchmark's development
 * queries and its first two held-out sets (round 2: and the third), never on the fourth.
 */
export const RANKING = {
  k1: 1.2,
  fields: {
    name: { weight: 2, b: 0.5 },
    title: { weight: 2, b: 0.5 },
    description: { weight: 1, b: 0.75 },
    parameters: { weight: 0.6, b: 0.75 },
    provider: { weight: 1, b: 0 },
  } satisfies Record<Field, { weight: number; b: number }>,
  /**
   * A description's opening, in words: a term a tool says only past it (and in no other field)
   * earns no coverage credit, and a term weaker than a thesaurus synonym earns none when the tool
   * says it only in its description (description-reach.ts).
   */
  descriptionHead: 40,
  relatedWeight: 0.6,
  wordnetWeight: 0.3,
  vocabularyWeight: 0.7,
  /** A query word that only makes up a multi-word vocabulary phrase ("get" in "get rid of"): the phrase's tool words speak for it. */
  idiomWordWeight: 0.3,
  /** A verb + particle's one-word forms ("coming up" → upcoming, "back up" → backup; query-terms.ts): the user's own words, spelt as tool authors do. */
  compoundWeight: 0.7,
  /** The kind a pasted value's shape names ("PAY-9" → issue, "#ops" → channel; query-entities.ts). */
  entityWeight: 0.7,
  /**
   * Score × ((1 + credit) / (1 + concepts the index can match)) ^ this, the credit summing, per
   * concept the tool matches, its best term's weight / vocabularyWeight (at most 1): a tool that
   * answers more of what the query asks (its words, each with its synonyms and phrases) beats one
   * that matches a single rare word many times, and a concept met only through a weak synonym
   * counts in part.
   */
  coverageExponent: 1,
  /** A concept's weight in coverage is its strongest found term's idf to this power (0: every concept alike). */
  conceptRarity: 0.25,
  /** The query names the tool's provider (a word of its name or title, written as a name: provider-naming.ts), by as many of its words as any provider it names: score × (1 + this). */
  namedProviderBonus: 1,
  /** A provider word names its provider only when at most this share of the other providers' tools say it. */
  providerWordShare: 0.02,
  /** How many of the best tools the exact-wording bonuses re-rank. */
  rerankWindow: 40,
  /** Every word of the tool's name (two or more, its provider's left out) is in the query: score × (1 + this). */
  exactNameBonus: 0.5,
  /** Score × (1 + this × the share of the query's adjacent word pairs found adjacent in the tool's name, title or description). */
  exactPhraseBonus: 0.5,
  /** A question about state ("has anyone approved…", "who is…"; query-intent.ts): a tool whose name's verb reads scores × (1 + this). */
  readQuestionBonus: 0.3,
  /** A question asking for many things ("what … are", "which … exist"): a tool whose name's verb lists scores × (1 + this). */
  listQuestionBonus: 0.5,
  /** A request that is no question and asks for no reading (no get, list, show, find, … nor their synonyms): a tool whose name's verb only reads scores × (1 − this). */
  unaskedReadingPenalty: 0.2,
  /** A query that asks for no removing or stopping: a tool whose name says delete, drop, stop, … scores × (1 − this). */
  unaskedDestructionPenalty: 0.4,
} as const;
