import { queryEntities } from './query-entities.js';
import { RANKING, SEARCH_LIMITS } from './ranking.js';
import { allWords, compounds, compoundTerm, isContentWord, PARTICLES, stem, terms, wordPairs } from './terms.js';
import { relatedTerms } from './thesaurus.js';
import { vocabularyMatch } from './vocabulary-expansion.js';
import { verbSynonyms } from './wordnet.js';

/** A term a query looks for: its weight, and the query concepts it stands for as bits (see queryTerms). */
export interface QueryTerm {
  weight: number;
  concepts: number;
}

/** A verb + particle's one-word forms, which tool authors write for the action's noun or adjective: "set up" → setup, "coming up" → upcoming. */
function particleCompounds(pair: string): string[] {
  const [verb, particle] = pair.split('_') as [string, string];
  if (!PARTICLES.has(particle) || PARTICLES.has(verb) || !isContentWord(verb)) return [];
  const base = stem(verb);
  return [stem(base + particle), stem(particle + base)];
}

const bounded = (text: string) =>
  text.length > SEARCH_LIMITS.queryChars ? text.slice(0, SEARCH_LIMITS.queryChars) : text;

/** The query's own words in order, stemmed, pasted values taken out: what a tool's exact phrases are compared with. */
export const queryPhrase = (text: string): string[] =>
  terms(queryEntities(bounded(text)).rest, SEARCH_LIMITS.queryChars).slice(0, 2 * SEARCH_LIMITS.queryTerms);

/** Concepts are bits of a 32-bit integer; a query with more (past 32 distinct words) leaves the rest uncounted. */
const MAX_CONCEPTS = 31;

/** Each WordNet verb's synonyms as stemmed terms, tokenized once: WordNet's verbs bound the cache. */
const synonymTermsByVerb = new Map<string, readonly string[]>();

function synonymTerms(phrase: string): readonly string[] {
  const known = synonymTermsByVerb.get(phrase);
  if (known !== undefined) return known;
  const synonyms = verbSynonyms(phrase);
  if (synonyms.length === 0) return synonyms;
  const found = [...new Set(synonyms.flatMap((synonym) => terms(synonym, SEARCH_LIMITS.queryChars)))];
  synonymTermsByVerb.set(phrase, found);
  return found;
}

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
  // Pasted values ("PAY-9", "jo@acme.io") are read by their shape, not split into words.
  const entities = queryEntities(bounded(text));
  const all = allWords(entities.rest, SEARCH_LIMITS.queryChars);
  const raw = [...new Set(all.filter(isContentWord))].slice(0, SEARCH_LIMITS.queryTerms);
  const own = raw.map(stem);
  const vocabulary = vocabularyMatch(all.map(stem));
  const found = new Map<string, QueryTerm>();
  const ids = new Map<string, number>();
  const add = (term: string, weight: number, concept: string) => {
    if (!ids.has(concept) && ids.size < MAX_CONCEPTS) ids.set(concept, ids.size);
    const id = ids.get(concept);
    const bit = id === undefined ? 0 : 1 << id;
    const known = found.get(term);
    if (known === undefined) found.set(term, { weight, concepts: bit });
    else found.set(term, { weight: Math.max(known.weight, weight), concepts: known.concepts | bit });
  };
  // A PascalCase name ("GitHub") is one concept: its joined term at full weight, its parts ("git", "hub") weak and unexpanded.
  const partOf = new Map<string, string>();
  for (const compound of compounds(entities.rest, SEARCH_LIMITS.queryChars)) {
    const joined = compoundTerm(compound);
    for (const part of terms(compound, compound.length)) partOf.set(part, joined);
    add(joined, 1, joined);
    for (const related of relatedTerms(joined)) add(related, RANKING.relatedWeight, joined);
  }
  own.forEach((term) => {
    const compound = partOf.get(term);
    if (compound !== undefined) add(term, RANKING.idiomWordWeight, compound);
    else add(term, vocabulary.idiomWords.has(term) ? RANKING.idiomWordWeight : 1, term);
  });
  for (const term of own)
    if (!partOf.has(term)) for (const related of relatedTerms(term)) add(related, RANKING.relatedWeight, term);
  for (const [term, from] of vocabulary.targets) {
    for (const concept of from) {
      add(term, RANKING.vocabularyWeight, concept);
      for (const related of relatedTerms(term)) add(related, RANKING.vocabularyWeight * RANKING.relatedWeight, concept);
    }
  }
  // WordNet is asked about each word and each two-word verb; particles ("on", "in") are stop words, so pairs come from all words.
  raw.forEach((word) => {
    const term = stem(word);
    if (!partOf.has(term)) for (const synonym of synonymTerms(word)) add(synonym, RANKING.wordnetWeight, term);
  });
  for (const pair of wordPairs(all.slice(0, 2 * SEARCH_LIMITS.queryTerms))) {
    const concept = stem(pair.slice(0, pair.indexOf('_')));
    for (const term of synonymTerms(pair)) add(term, RANKING.wordnetWeight, concept);
    for (const term of particleCompounds(pair)) add(term, RANKING.compoundWeight, concept);
  }
  entities.words.forEach((kind, i) => {
    for (const term of terms(kind, SEARCH_LIMITS.queryChars)) add(term, RANKING.entityWeight, `#value ${i}`);
  });
  return found;
}
