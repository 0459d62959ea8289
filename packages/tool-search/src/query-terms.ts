import { queryEntities } from './query-entities.js';
import { RANKING, SEARCH_LIMITS } from './ranking.js';
import { allWords, stem, terms, wordPairs, words } from './terms.js';
import { relatedTerms } from './thesaurus.js';
import { vocabularyMatch } from './vocabulary-expansion.js';
import { verbSynonyms } from './wordnet.js';

/** A term a query looks for: its weight, and the query concepts it stands for as bits (see queryTerms). */
export interface QueryTerm {
  weight: number;
  concepts: number;
}

/** Concepts are bits of a 32-bit integer; a query with more (past 32 distinct words) leaves the rest uncounted. */
const MAX_CONCEPTS = 31;

/**
 * What a query looks for. Its distinct words (at most SEARCH_LIMITS.queryTerms) at weight 1, or
 * at RANKING.idiomWordWeight when they only make up a vocabulary idiom ("get" and "rid" of "get
 * rid of"); their thesaurus terms at RANKING.relatedWeight; the software-tools vocabulary's tool
 * words for its phrases at RANKING.vocabularyWeight; the WordNet verb synonyms of its words and
 * two-word verbs ("bring back", "pass … along") at RANKING.wordnetWeight; the kinds its pasted
 * values' shapes name at RANKING.entityWeight. A term keeps its highest weight.
 *
 * Each query word is a concept, and so is each pasted value; a term carries the concepts it came
 * from (a synonym its word's, a vocabulary phrase's tool words the phrase's first word's), so a
 * tool's matches can be counted per concept, not per term.
 */
export function queryTerms(text: string): Map<string, QueryTerm> {
  const bounded = text.length > SEARCH_LIMITS.queryChars ? text.slice(0, SEARCH_LIMITS.queryChars) : text;
  // Pasted values ("PAY-9", "jo@acme.io") are read by their shape, not split into words.
  const entities = queryEntities(bounded);
  const query = entities.rest;
  const raw = [...new Set(words(query, SEARCH_LIMITS.queryChars))].slice(0, SEARCH_LIMITS.queryTerms);
  const vocabulary = vocabularyMatch(query, SEARCH_LIMITS.queryChars);
  const found = new Map<string, QueryTerm>();
  const ids = new Map<string, number>();
  const add = (term: string, weight: number, concept: string) => {
    if (!ids.has(concept) && ids.size < MAX_CONCEPTS) ids.set(concept, ids.size);
    const bit = ids.has(concept) ? 1 << ids.get(concept)! : 0;
    const known = found.get(term);
    if (known === undefined) found.set(term, { weight, concepts: bit });
    else found.set(term, { weight: Math.max(known.weight, weight), concepts: known.concepts | bit });
  };
  for (const word of raw) add(stem(word), vocabulary.idiomWords.has(stem(word)) ? RANKING.idiomWordWeight : 1, stem(word));
  for (const word of raw) for (const related of relatedTerms(stem(word))) add(related, RANKING.relatedWeight, stem(word));
  for (const [term, from] of vocabulary.targets) for (const concept of from) add(term, RANKING.vocabularyWeight, concept);
  // Two-word verbs are looked up with stop words kept: particles ("on", "in") are stop words.
  const phrases = [...raw, ...wordPairs(allWords(query, SEARCH_LIMITS.queryChars).slice(0, 2 * SEARCH_LIMITS.queryTerms))];
  for (const phrase of phrases) {
    const concept = stem(phrase.split('_')[0]!);
    for (const synonym of verbSynonyms(phrase)) for (const term of terms(synonym, SEARCH_LIMITS.queryChars)) add(term, RANKING.wordnetWeight, concept);
  }
  entities.words.forEach((kind, i) => {
    for (const term of terms(kind, SEARCH_LIMITS.queryChars)) add(term, RANKING.entityWeight, `#value ${i}`);
  });
  return found;
}
