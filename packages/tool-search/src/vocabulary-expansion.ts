import { allWords, stem, terms } from './terms.js';
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
      if (phraseWords.length === 0 || phraseWords[0] === GAP) continue;
      const list = byFirst.get(phraseWords[0]!) ?? [];
      list.push({ words: phraseWords, targets });
      byFirst.set(phraseWords[0]!, list);
    }
  }
  return byFirst;
}

/** Every vocabulary phrase, action and object lines alike, by its first stemmed word. */
const PHRASES = phrasesOf([...ACTION_VOCABULARY, ...OBJECT_VOCABULARY]);

/** Whether `phrase` (from its index `p`) matches `query` at `q`; a GAP takes 0 to MAX_GAP_WORDS words, tried shortest first. */
function matchesAt(phrase: readonly string[], p: number, query: readonly string[], q: number): boolean {
  if (p === phrase.length) return true;
  if (phrase[p] === GAP) {
    for (let skip = 0; skip <= MAX_GAP_WORDS && q + skip <= query.length; skip++) if (matchesAt(phrase, p + 1, query, q + skip)) return true;
    return false;
  }
  return q < query.length && query[q] === phrase[p] && matchesAt(phrase, p + 1, query, q + 1);
}

/**
 * The tool terms a query's phrases stand for in the software-tools vocabulary ("spin up the boxes"
 * → start, instance), at most `maxChars` of the query read.
 */
export function vocabularyTerms(query: string, maxChars: number): Set<string> {
  const queryWords = allWords(query, maxChars).map(stem);
  const found = new Set<string>();
  for (let q = 0; q < queryWords.length; q++) {
    for (const phrase of PHRASES.get(queryWords[q]!) ?? []) {
      if (matchesAt(phrase.words, 0, queryWords, q)) for (const target of phrase.targets) found.add(target);
    }
  }
  return found;
}
