import { allWords, stem, terms } from './terms.js';
import { ACTION_VOCABULARY, OBJECT_VOCABULARY } from './software-vocabulary.js';

/** A vocabulary phrase as stemmed words (GAP for "up to MAX_GAP_WORDS words") and the tool terms it stands for. */
interface Phrase {
  words: readonly string[];
  targets: readonly string[];
}

const GAP = '…';
const MAX_GAP_WORDS = 3;
/** Vocabulary lines are trusted data, but a phrase longer than this is a typo, not a phrase. */
const MAX_PHRASE_WORDS = 8;

/** What a query's phrases say: the tool terms to look for, and the actions among them (for the intent bonus). */
export interface VocabularyMatch {
  terms: ReadonlySet<string>;
  actions: ReadonlySet<string>;
}

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

const ACTION_PHRASES = phrasesOf(ACTION_VOCABULARY);
const OBJECT_PHRASES = phrasesOf(OBJECT_VOCABULARY);

/** Every tool term the action lines name ("create", "delet", "list", …): a tool's action is the first of them in its name. */
export const ACTION_TERMS: ReadonlySet<string> = new Set(ACTION_VOCABULARY.flatMap((line) => terms(line.slice(0, line.indexOf(':')), line.length)));

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
 * The software-tools vocabulary's reading of a query (at most `maxChars` read): the tool terms its
 * phrases stand for ("spin up the boxes" → start, instance) and which of them are actions.
 */
export function vocabularyMatch(query: string, maxChars: number): VocabularyMatch {
  const queryWords = allWords(query, maxChars).map(stem);
  const found = new Set<string>();
  const actions = new Set<string>();
  for (let q = 0; q < queryWords.length; q++) {
    for (const [phrases, isAction] of [
      [ACTION_PHRASES, true],
      [OBJECT_PHRASES, false],
    ] as const) {
      for (const phrase of phrases.get(queryWords[q]!) ?? []) {
        if (!matchesAt(phrase.words, 0, queryWords, q)) continue;
        for (const target of phrase.targets) {
          found.add(target);
          if (isAction) actions.add(target);
        }
      }
    }
  }
  return { terms: found, actions };
}
