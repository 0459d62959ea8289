import type { SearchHit } from './tool-index.js';
import type { ListedTool } from './tool-fields.js';

/**
 * What the search meta-tool tells the calling model (issue 35.3): how to phrase a query so that
 * it meets the tools' own wording, and what to do when a search comes back weak.
 */
export const SEARCH_GUIDANCE = {
  description:
    'Find the tools for a task among those you may use here. Phrase the query as an action and its object, ' +
    'in the words a tool would use for itself ("create issue", "list pull requests", "send message to channel", ' +
    '"geocode address"), and name the service when you know it ("GitHub", "Slack"); one action per search. ' +
    'The best matches come back ranked, each with its name, description and input schema; a tool offered by ' +
    'several providers comes back once, naming the others. A weak result says so: then rephrase, or browse: ' +
    'call with {"browse": true} for the providers and what each offers, then {"browse": true, "provider": "<name>"} ' +
    'for its tools.',
  query: 'An action and its object, in the tools\' words (e.g. "create issue GitHub", "list channels").',
  weakNote:
    "No tool matches the query well. Rephrase it as an action and its object in the tools' words, or browse a " +
    'provider: {"browse": true, "provider": "<name>"}.',
} as const;

/** Below this share of the query's concepts (weighted by rarity) the best hit answers, a result is weak. */
export const WEAK_COVERAGE = 0.5;

/** Whether a search came back weak: nothing, or a best hit that answers less than WEAK_COVERAGE of the query. */
export const isWeakResult = (hits: readonly SearchHit<ListedTool>[]): boolean =>
  hits.length === 0 || hits[0]!.coverage < WEAK_COVERAGE;
