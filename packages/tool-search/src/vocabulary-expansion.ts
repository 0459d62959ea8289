import { allWords, PARTICLES, stem, terms } from './terms.js';
import { DOMAIN_CONCEPTS } from './domain-concepts.js';
import { ACTION_VOCABULARY, OBJECT_VOCABULARY } from './software-vocabulary.js';

/** A vocabulary phrase as stemmed words (GAP for "up to MAX_GAP_WORDS words") and the tool terms it stands for. */
interface Phrase {
  words: readonly string[];
  targets: readonly string[];
}

const GAP = '…';
const MAX_GAP_WORDS = 4;
/** Vocabulary lines are trusted data, but a phrase longer than this is a typo, not a phrase. */
const MAX_PHRASE_WORDS = 8;

/** Parses `tool words: phrase | phrase` lines into phrases keyed by their first stemmed word. */
function phrasesOf(lines: readonly string[]): Map<string, Phrase[]> {
  const byFirst = new Map<string, Phrase[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    const targets = [...new Set(terms(line.slice(0, colon), colon))];
    for (const text of line.slice(colon + 1).split('|')) {
      const phraseWords = text
        .trim()
        .split(/\s+/)
        .flatMap((word) => (word === GAP ? [GAP] : allWords(word, word.length).map(stem)))
        .slice(0, MAX_PHRASE_WORDS);
      const [first, second] = phraseWords;
      if (first === undefined || first === GAP) continue;
      // A verb + particle phrase is separable: "pass along" also matches "pass this email along".
      if (phraseWords.length === 2 && second !== undefined && PARTICLES.has(second)) phraseWords.splice(1, 0, GAP);
      const list = byFirst.get(first) ?? [];
      list.push({ words: phraseWords, targets });
      byFirst.set(first, list);
    }
  }
  return byFirst;
}

/** Every vocabulary phrase, action, object and domain-concept lines alike, by its first stemmed word. */
const PHRASES = phrasesOf([...ACTION_VOCABULARY, ...OBJECT_VOCABULARY, ...DOMAIN_CONCEPTS]);
/**
 * The query positions `phrase` (from its index `p`) covers when it matches `query` at `q`, else
 * null; a GAP takes 0 to MAX_GAP_WORDS words, tried shortest first, and covers none of them.
 */
function matchAt(phrase: readonly string[], p: number, query: readonly string[], q: number): number[] | null {
  if (p === phrase.length) return [];
  if (phrase[p] === GAP) {
    for (let skip = 0; skip <= MAX_GAP_WORDS && q + skip <= query.length; skip++) {
      const rest = matchAt(phrase, p + 1, query, q + skip);
      if (rest !== null) return rest;
    }
    return null;
  }
  if (q >= query.length || query[q] !== phrase[p]) return null;
  const rest = matchAt(phrase, p + 1, query, q + 1);
  return rest === null ? null : [q, ...rest];
}

/** What the vocabulary reads in a query: the tool terms its phrases stand for, and the query words that only made up a multi-word phrase. */
export interface VocabularyMatch {
  /** Tool terms (stemmed) the query's phrases stand for ("spin up the boxes" → start, instance), each with the first words (stemmed) of the phrases that named it. */
  targets: Map<string, Set<string>>;
  /** Stemmed words of multi-word phrases that are not tool terms themselves ("get" and "rid" of "get rid of"): idiom parts, not the user's subject. */
  idiomWords: Set<string>;
}

/**
 * Reads a query (all its words, stop words kept, stemmed) through the software-tools vocabulary: the tool terms
 * its phrases stand for, and the words used up by multi-word phrases. A word inside a multi-word
 * phrase does not also count as a one-word phrase ("away" of "throw away" is no "away" status).
 */
export function vocabularyMatch(queryWords: readonly string[]): VocabularyMatch {
  const targets = new Map<string, Set<string>>();
  const found = (target: string, word: string) => targets.set(target, (targets.get(target) ?? new Set()).add(word));
  const covered = new Set<number>();
  const single: { at: number; word: string; targets: readonly string[] }[] = [];
  for (const [q, word] of queryWords.entries()) {
    for (const phrase of PHRASES.get(word) ?? []) {
      const positions = matchAt(phrase.words, 0, queryWords, q);
      if (positions === null) continue;
      if (positions.length === 1) single.push({ at: q, word, targets: phrase.targets });
      else {
        for (const target of phrase.targets) found(target, word);
        for (const at of positions) covered.add(at);
      }
    }
  }
  for (const { at, word, targets: words } of single)
    if (!covered.has(at)) for (const target of words) found(target, word);
  const idiomWords = new Set(queryWords.filter((word, at) => covered.has(at) && !targets.has(word)));
  return { targets, idiomWords };
}
