import { ACTION_VOCABULARY } from './software-vocabulary.js';
import { allWords, stem } from './terms.js';

/** Words that open a question about what is there or what happened ("who is…", "has anyone…", "what … are"). */
const QUESTION_OPENERS: ReadonlySet<string> = new Set(
  'who whom whose what which where when why how is are was were has have had did does'.split(' '),
);
/** Openers of a request phrased as a question ("can you create…", "could you…"): asking for an action, not about state. */
const REQUEST_OPENERS: ReadonlySet<string> = new Set('can could would will shall please'.split(' '));
/** After "how": a how-to ("how do I create…", "how to add…"), which asks for the action named next. */
const HOW_TO: ReadonlySet<string> = new Set('do does can could should would to'.split(' '));
/** Words saying the answer is many things ("what … are", "which … exist", "all"): a listing rather than one record. */
const MANY: ReadonlySet<string> = new Set('are were exist exists all'.split(' '));

/** What a query asks to be read rather than done: none, one record or state, or a listing. */
export type ReadIntent = 'none' | 'read' | 'list';

/**
 * Whether the query is a question about state ("has anyone approved my PR", "who is U02 in the
 * workspace", "what collections are in this database") rather than a request to act: such a
 * question is answered by a tool that reads (get, list, search, …), not by one that creates or
 * changes what its nouns name. "what … are", "which … exist" and "all" ask for a listing.
 */
export function readIntent(query: string, maxChars: number): ReadIntent {
  const text = query.length > maxChars ? query.slice(0, maxChars) : query;
  const all = allWords(text, maxChars);
  const first = all[0];
  if (first === undefined || REQUEST_OPENERS.has(first)) return 'none';
  const question = QUESTION_OPENERS.has(first) || text.trimEnd().endsWith('?');
  if (!question || (first === 'how' && HOW_TO.has(all[1] ?? ''))) return 'none';
  return all.some((word) => MANY.has(word)) ? 'list' : 'read';
}

/** Name verbs of tools that read (stemmed as the index stems names). */
export const READING_VERBS: ReadonlySet<string> = new Set(
  'get list search find read describe show query count fetch retrieve view lookup inspect'.split(' ').map(stem),
);
/** Name words of tools that destroy or end something (stemmed): offered first only to a query that asks to remove or stop. */
export const DESTRUCTIVE_VERBS: ReadonlySet<string> = new Set(
  'delete remove drop terminate cancel stop uninstall wipe purge clear destroy kill erase disconnect'
    .split(' ')
    .map(stem),
);

/** Whether any term a query looks for (its words, their synonyms and vocabulary phrases) is one of `verbs`. */
export const asksFor = (wanted: Iterable<string>, verbs: ReadonlySet<string>): boolean => {
  for (const term of wanted) if (verbs.has(term)) return true;
  return false;
};

/** Name verbs of tools that list many things. */
export const LISTING_VERBS: ReadonlySet<string> = new Set(['list']);

/** The action verbs tool names start with (each vocabulary line's first tool word, and the reading verbs), stemmed. */
const NAME_ACTIONS: ReadonlySet<string> = new Set([
  ...READING_VERBS,
  ...ACTION_VOCABULARY.map((line) => stem(line.slice(0, line.search(/[ :]/)))),
]);

/**
 * A tool name's action: its first word that is an action verb ("get" of `slack_get_user`,
 * "create" of `create_list`), so a service's prefix is passed over; null when none is.
 */
export const nameAction = (nameTerms: readonly string[]): string | null =>
  nameTerms.find((term) => NAME_ACTIONS.has(term)) ?? null;
