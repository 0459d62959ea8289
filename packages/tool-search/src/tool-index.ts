import { descriptionReach, REACH } from './description-reach.js';
import { namedWords } from './provider-naming.js';
import {
  asksFor,
  DESTRUCTIVE_VERBS,
  LISTING_VERBS,
  nameAction,
  READING_VERBS,
  readIntent,
  type ReadIntent,
} from './query-intent.js';
import { queryPhrase, queryTerms } from './query-terms.js';
import { RANKING, SEARCH_LIMITS, type Field } from './ranking.js';
import { compounds, compoundTerm, terms } from './terms.js';
import { FIELD_LIMITS, fieldsOf, type ListedTool } from './tool-fields.js';

export { RANKING, SEARCH_LIMITS } from './ranking.js';

/** The provider a tool comes from, as the operator named it: indexed, and named in grouped results. */
export interface ProviderLabel {
  name: string;
  title: string;
}

/** Another provider's copy of a result (same tool text but for the provider's name): grouped under the result. */
export interface SameTool {
  name: string;
  provider: string | null;
}

/** One ranked result: the tool as it was indexed and its score (higher is better). */
export interface SearchHit<T> {
  tool: T;
  name: string;
  score: number;
  /** The provider's name, when the index was built with providers. */
  provider: string | null;
  /** Share of what the query asks (its concepts, weighted by rarity; a word no tool has counts as the rarest) the tool answers, 0–1: low means a weak match. */
  coverage: number;
  /** Near-duplicates from other providers, ranked below this one and folded into it. */
  alsoFrom: SameTool[];
}

const FIELDS = Object.keys(RANKING.fields) as Field[];
/** The fields whose word order is compared with the query's (exact-phrase bonus). */
const PHRASE_FIELDS: readonly Field[] = ['name', 'title', 'description'];

/** What a query asks of a tool's action: a question's intent, any reading, any removing or stopping. */
interface Asked {
  intent: ReadIntent;
  reading: boolean;
  destroying: boolean;
}

/** A term's documents and, for each, its precomputed BM25F contribution (idf × saturated tf). */
interface Posting {
  idf: number;
  docs: number[];
  weights: number[];
  /** Per document: how far the match counts toward coverage (REACH: only deep in a long description, only in the description, or elsewhere too). */
  reach: number[];
}

/** What the re-ranking and grouping read of each tool. */
interface DocInfo {
  /** Stemmed words of name, title and description in order, each field ending in a break (""). */
  phrase: string[];
  /** The name's own words (after any `prefix__`), its provider's words left out. */
  nameTerms: string[];
  /** The name's action verb ("get" of `slack_get_user`), if it has one. */
  action: string | null;
  /** The name says it deletes, drops, stops, … something. */
  destroys: boolean;
  /** Tools with the same key are near-duplicates: the same name and description but for the provider. */
  group: number;
  provider: string | null;
  /** The provider's name and title terms: how many of them a query says tells which provider it names. */
  providerTerms: ReadonlySet<string>;
}

/**
 * An inverted index over a set of tool definitions, ranked by BM25F over name, title,
 * description, input schema text and the provider's name and title. Built once per tool set
 * (`build`), then searched; pure: no I/O, no clock, same input same order (ties by name).
 */
export class ToolIndex<T extends ListedTool> {
  private constructor(
    private readonly tools: readonly T[],
    private readonly names: readonly string[],
    private readonly postings: ReadonlyMap<string, Posting>,
    private readonly info: readonly DocInfo[],
    private readonly providerDocs: ReadonlyMap<string, readonly number[]>,
  ) {}

  /** Each tool's adjacent word pairs, filled in as tools reach a re-ranking window. */
  private readonly pairs: (ReadonlySet<string> | undefined)[] = [];

  /**
   * Indexes up to SEARCH_LIMITS.tools tools with a string name; a repeated name keeps its first
   * tool. `providerOf` names each tool's provider (the caller's, never read from the tool: an
   * upstream could claim any name); without it tools have no provider field and are not grouped
   * across providers.
   */
  static build<T extends ListedTool>(
    tools: readonly T[],
    providerOf: (tool: T) => ProviderLabel | null = () => null,
  ): ToolIndex<T> {
    const kept: T[] = [];
    const docs: Map<string, number>[][] = [];
    const info: DocInfo[] = [];
    const seen = new Set<string>();
    const groups = new Map<string, number>();
    const providerDocs = new Map<string, number[]>();
    const reach: ReadonlyMap<string, number>[] = [];
    for (const tool of tools) {
      if (kept.length >= SEARCH_LIMITS.tools) break;
      const fields = fieldsOf(tool);
      if (fields === null || seen.has(fields.name)) continue;
      seen.add(fields.name);
      kept.push(tool);
      const provider = providerOf(tool);
      const texts = { ...fields, provider: provider === null ? '' : `${provider.name} ${provider.title}` };
      const fieldWords = FIELDS.map((field) => terms(texts[field], FIELD_LIMITS.textChars));
      const fieldTerms = FIELDS.map((field, f) => [
        ...fieldWords[f]!,
        ...compounds(texts[field], FIELD_LIMITS.textChars).map(compoundTerm),
      ]);
      docs.push(fieldTerms.map(counts));
      reach.push(descriptionReach(FIELDS, fieldWords, fieldTerms));
      const providerTerms = new Set(fieldTerms[FIELDS.indexOf('provider')]);
      for (const term of providerTerms) {
        const known = providerDocs.get(term);
        if (known === undefined) providerDocs.set(term, [kept.length - 1]);
        else known.push(kept.length - 1);
      }
      const nameTerms = terms(baseName(fields.name), FIELD_LIMITS.textChars).filter((t) => !providerTerms.has(t));
      const description = fieldTerms[FIELDS.indexOf('description')]!.filter((t) => !providerTerms.has(t));
      // Without providers there is nothing to tell copies apart by: each tool stands alone.
      const key = provider === null ? `\u0001${fields.name}` : `${nameTerms.join(' ')}\u0000${description.join(' ')}`;
      if (!groups.has(key)) groups.set(key, groups.size);
      info.push({
        phrase: PHRASE_FIELDS.flatMap((field) => [...fieldWords[FIELDS.indexOf(field)]!, '']),
        nameTerms,
        action: nameAction(nameTerms),
        destroys: nameTerms.some((term) => DESTRUCTIVE_VERBS.has(term)),
        group: groups.get(key)!,
        provider: provider?.name ?? null,
        providerTerms,
      });
    }
    const postings = postingsOf(docs, reach);
    return new ToolIndex(kept, [...seen], postings, info, distinctNames(providerDocs, postings, info));
  }

  /** How many tools were indexed. */
  get size(): number {
    return this.tools.length;
  }

  /** The indexed tools in index order, with their names (what semantic ranking embeds). */
  listed(): { tool: T; name: string }[] {
    return this.tools.map((tool, doc) => ({ tool, name: this.names[doc]! }));
  }

  /** The indexed tool at a position as a hit of its own (score 0, no coverage): for rankings made outside the index. */
  hitAt(doc: number): SearchHit<T> {
    return {
      tool: this.tools[doc]!,
      name: this.names[doc]!,
      score: 0,
      provider: this.info[doc]!.provider,
      coverage: 0,
      alsoFrom: [],
    };
  }

  /**
   * The best `limit` tools for `query` (at most SEARCH_LIMITS.results), by score then name, each
   * near-duplicate group (the same tool from several providers) as one hit naming the others.
   * Tools matching no query term are not returned; a query without terms returns nothing.
   */
  search(query: string, limit: number): SearchHit<T>[] {
    const wanted = Number.isFinite(limit) ? Math.min(Math.max(Math.trunc(limit), 0), SEARCH_LIMITS.results) : 0;
    if (wanted === 0) return [];
    const n = this.tools.length;
    const scores = new Float64Array(n);
    const credited = new Int32Array(n);
    const credit = new Float64Array(n);
    const touched: number[] = [];
    let answerable = 0;
    let asked = 0;
    // Each concept weighs by the rarity (idf) of its strongest term found: a rare decisive word counts more than common ones.
    const conceptWeight = new Float64Array(32);
    // Strongest terms first, so a concept's first match in a tool is its best: the credit it gets.
    const looked = [...queryTerms(query)].sort(([a, x], [b, y]) => y.weight - x.weight || compareNames(a, b));
    for (const [term, { weight, concepts }] of looked) {
      asked |= concepts;
      const posting = this.postings.get(term);
      if (!posting) continue;
      for (let rest = concepts & ~answerable; rest !== 0; rest &= rest - 1)
        conceptWeight[31 - Math.clz32(rest & -rest)] = posting.idf ** RANKING.conceptRarity;
      answerable |= concepts;
      const share = Math.min(1, weight / RANKING.vocabularyWeight);
      // A synonym or other weak term found only in a description is too weak a sign to count as answered.
      const reaches = weight < RANKING.relatedWeight ? REACH.full : REACH.description;
      for (let i = 0; i < posting.docs.length; i++) {
        const doc = posting.docs[i]!;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += weight * posting.weights[i]!;
        const fresh = concepts & ~credited[doc]!;
        if (fresh !== 0 && posting.reach[i]! >= reaches) {
          credit[doc]! += share * weightOf(fresh, conceptWeight);
          credited[doc]! |= fresh;
        }
      }
    }
    const phrase = queryPhrase(query);
    const named = this.namedProviders(query, phrase);
    const count = bitCount(answerable);
    const total = weightOf(answerable, conceptWeight);
    // A concept no tool has counts as the rarest there is, in the coverage a hit reports (not in its score).
    const asking = total + bitCount(asked & ~answerable) * Math.log(1 + (n + 0.5) / 0.5) ** RANKING.conceptRarity;
    const coverage = new Float64Array(n);
    for (const doc of touched) {
      const share = total > 0 ? credit[doc]! / total : 0;
      coverage[doc] = credit[doc]! / asking;
      scores[doc]! *= ((1 + share * count) / (1 + count)) ** RANKING.coverageExponent;
      if (named.has(doc)) scores[doc]! *= 1 + RANKING.namedProviderBonus;
    }
    const byScore = (a: number, b: number) => scores[b]! - scores[a]! || compareNames(this.names[a]!, this.names[b]!);
    touched.sort(byScore);
    // Exact wording first: among the best, a tool carrying the query's word pairs or its whole name rises.
    const window = touched.slice(0, RANKING.rerankWindow);
    const termWeights = new Map([...looked].map(([term, { weight }]) => [term, weight]));
    const wants = askedOf(query, termWeights);
    for (const doc of window) scores[doc]! *= this.exactness(doc, phrase, termWeights) * this.direction(doc, wants);
    window.sort(byScore);
    return this.grouped([...window, ...touched.slice(RANKING.rerankWindow)], wanted, coverage, scores);
  }

  /**
   * The multiplier for exact wording: the query's word pairs in the tool's text, the tool's whole
   * name asked for (each name word by the query's own word, or in part by an expansion: "make a
   * folder" asks for create_directory).
   */
  private exactness(doc: number, phrase: readonly string[], wanted: ReadonlyMap<string, number>): number {
    const { phrase: text, nameTerms } = this.info[doc]!;
    let factor = 1;
    if (nameTerms.length >= 2 || (nameTerms.length === 1 && new Set(phrase).size === 1)) {
      let share = 0;
      for (const term of nameTerms) share += Math.min(1, (wanted.get(term) ?? 0) / RANKING.vocabularyWeight);
      if (nameTerms.every((term) => wanted.has(term)))
        factor *= 1 + (RANKING.exactNameBonus * share) / nameTerms.length;
    }
    if (phrase.length >= 2) {
      const pairs = this.pairsOf(doc, text);
      let matched = 0;
      for (let i = 0; i + 1 < phrase.length; i++) if (pairs.has(`${phrase[i]} ${phrase[i + 1]}`)) matched += 1;
      factor *= 1 + (RANKING.exactPhraseBonus * matched) / (phrase.length - 1);
    }
    return factor;
  }

  /**
   * The multiplier for the action's direction: a question about state favours tools that read, a
   * listing question those that list; a request to act that asks for no reading puts reading tools
   * back, and a tool that destroys waits for a query that asks to remove or stop.
   */
  private direction(doc: number, { intent, reading, destroying }: Asked): number {
    const { action, destroys } = this.info[doc]!;
    const factor = destroys && !destroying ? 1 - RANKING.unaskedDestructionPenalty : 1;
    if (action === null || !READING_VERBS.has(action)) return factor;
    if (intent === 'none') return reading ? factor : factor * (1 - RANKING.unaskedReadingPenalty);
    return (
      factor *
      (1 + (intent === 'list' && LISTING_VERBS.has(action) ? RANKING.listQuestionBonus : RANKING.readQuestionBonus))
    );
  }

  /** A tool's adjacent word pairs, made on its first re-ranking and kept (at most one set per indexed tool). */
  private pairsOf(doc: number, text: readonly string[]): ReadonlySet<string> {
    const known = this.pairs[doc];
    if (known !== undefined) return known;
    const pairs = new Set<string>();
    for (let i = 0; i + 1 < text.length; i++)
      if (text[i] !== '' && text[i + 1] !== '') pairs.add(`${text[i]} ${text[i + 1]}`);
    this.pairs[doc] = pairs;
    return pairs;
  }

  /**
   * The tools of the providers a query names ("in Mongo", "our HubSpot portal") most specifically:
   * those whose provider's name and title the query says the most words of ("Acme automation"
   * names the automation server, not "Acme browser"; "Acme" alone names both).
   */
  private namedProviders(query: string, phrase: readonly string[]): Set<number> {
    const said = new Map<number, number>();
    const own = new Set(phrase);
    let most = 0;
    for (const term of namedWords(query, SEARCH_LIMITS.queryChars))
      for (const doc of this.providerDocs.get(term) ?? []) {
        if (said.has(doc)) continue;
        let count = 0;
        for (const word of this.info[doc]!.providerTerms) if (own.has(word)) count += 1;
        said.set(doc, count);
        most = Math.max(most, count);
      }
    return new Set([...said].filter(([, count]) => count === most).map(([doc]) => doc));
  }

  /** The first `wanted` groups in rank order: each group's best tool, with its other providers' copies named. */
  private grouped(order: readonly number[], wanted: number, coverage: Float64Array, scores: Float64Array) {
    const hits: SearchHit<T>[] = [];
    const byGroup = new Map<number, SearchHit<T>>();
    for (const doc of order) {
      const { group, provider } = this.info[doc]!;
      const name = this.names[doc]!;
      const first = byGroup.get(group);
      if (first !== undefined) {
        if (first.alsoFrom.length < SEARCH_LIMITS.alsoFrom) first.alsoFrom.push({ name, provider });
        continue;
      }
      if (hits.length === wanted) continue;
      const hit = {
        tool: this.tools[doc]!,
        name,
        score: scores[doc]!,
        provider,
        coverage: coverage[doc]!,
        alsoFrom: [],
      };
      hits.push(hit);
      byGroup.set(group, hit);
    }
    return hits;
  }
}

/** What a query asks of a tool's action: its question's intent, and whether it asks for any reading or any removing. */
const askedOf = (query: string, wanted: ReadonlyMap<string, number>): Asked => ({
  intent: readIntent(query, SEARCH_LIMITS.queryChars),
  reading: asksFor(wanted.keys(), READING_VERBS),
  destroying: asksFor(wanted.keys(), DESTRUCTIVE_VERBS),
});

/** A tool name without the gateway's `<prefix>__` (the provider's slug when names collide). */
function baseName(name: string): string {
  const at = name.lastIndexOf('__');
  return at === -1 ? name : name.slice(at + 2);
}

/**
 * The provider words that name their providers distinctly: those other providers' tools rarely say
 * (at most RANKING.providerWordShare of the tools). "Brave Search" is named by "brave", not by
 * "search", which half the catalog says; "Tavily web search" not by "web".
 */
function distinctNames(
  providerDocs: ReadonlyMap<string, readonly number[]>,
  postings: ReadonlyMap<string, Posting>,
  info: readonly Pick<DocInfo, 'providerTerms'>[],
): Map<string, readonly number[]> {
  const most = RANKING.providerWordShare * info.length;
  const distinct = new Map<string, readonly number[]>();
  for (const [term, docs] of providerDocs) {
    let elsewhere = 0;
    for (const doc of postings.get(term)?.docs ?? []) if (!info[doc]!.providerTerms.has(term)) elsewhere += 1;
    if (elsewhere <= most) distinct.set(term, docs);
  }
  return distinct;
}

/** The summed weights of the set bits. */
function weightOf(bits: number, weights: Float64Array): number {
  let sum = 0;
  for (let rest = bits; rest !== 0; rest &= rest - 1) sum += weights[31 - Math.clz32(rest & -rest)]!;
  return sum;
}

/** Per-document, per-field term counts → each term's posting with its BM25F weight and, per document, its reach. */
function postingsOf(
  docs: Map<string, number>[][],
  reach: readonly ReadonlyMap<string, number>[],
): Map<string, Posting> {
  const average = FIELDS.map(
    (_, f) => docs.reduce((sum, fields) => sum + lengthOf(fields[f]!), 0) / Math.max(docs.length, 1),
  );
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
    postings.set(term, {
      idf,
      docs: entry.docs,
      weights: entry.tf.map((tf) => (idf * tf * (k1 + 1)) / (k1 + tf)),
      reach: entry.docs.map((doc) => reach[doc]!.get(term) ?? REACH.full),
    });
  }
  return postings;
}

/** Set bits of a 32-bit integer. */
function bitCount(bits: number): number {
  let count = 0;
  for (let rest = bits >>> 0; rest !== 0; rest &= rest - 1) count += 1;
  return count;
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
