import { stem, terms } from './terms.js';

/** Words that introduce a service by name ("in Slack", "on GitHub", "with Brave", "via Stripe"). */
const NAMING_PREPOSITIONS: ReadonlySet<string> = new Set([
  'in',
  'on',
  'with',
  'via',
  'using',
  'from',
  'to',
  'into',
  'through',
  'at',
]);
/** A query word as written: letters and digits, its case kept. */
const WRITTEN_WORD = /[\p{L}\p{N}]+/gu;
const UPPER = /\p{Lu}/u;

/**
 * The query's words written as a name rather than as an everyday word, stemmed like the index's
 * terms (and split like them: "GitHub" gives "github", "git", "hub"): a word with a capital letter
 * that is not just the query's first letter ("in Slack", "the LINE account", "GitHub"), or a word
 * right after a naming preposition ("in slack"). "forget everything about Bob" names nothing, so a
 * provider called "everything" is not asked for by it.
 */
export function namedWords(query: string, maxChars: number): Set<string> {
  const text = query.length > maxChars ? query.slice(0, maxChars) : query;
  const named = new Set<string>();
  let previous = '';
  let first = true;
  for (const [word] of text.matchAll(WRITTEN_WORD)) {
    const capitalised = UPPER.test(first ? word.slice(1) : word);
    if (capitalised || NAMING_PREPOSITIONS.has(previous)) {
      named.add(stem(word.toLowerCase()));
      for (const term of terms(word, word.length)) named.add(term);
    }
    previous = word.toLowerCase();
    first = false;
  }
  return named;
}
