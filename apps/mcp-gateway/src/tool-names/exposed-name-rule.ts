import { createHash } from 'node:crypto';

// The naming rule of the unified endpoint, pure: which name each offered tool is exposed under,
// given the names already chosen in the scope. Chosen names are never revisited (the store keeps
// them), so adding or removing a provider never renames a tool that already has a name.

/** The longest exposed name: many clients refuse longer tool names. */
export const MAX_EXPOSED_NAME_LENGTH = 64;
/** Between a prefix (or a provider's slug) and the upstream name. */
export const NAME_SEPARATOR = '__';
/** How many numbered tags are tried before a tool is left unnamed (only a hostile catalog gets there). */
const MAX_ATTEMPTS = 50;
const SLUG_MAX_LENGTH = 24;
const HASH_LENGTH = 6;

/** The provider fields the rule reads. */
export interface NamingProvider {
  id: string;
  name: string;
  namePrefix: string | null;
}

/** One tool a provider offers, by its upstream name. */
export interface OfferedTool {
  provider: NamingProvider;
  upstreamName: string;
}

/** The name a provider's tool is exposed under. */
export interface ToolNameAssignment {
  providerId: string;
  upstreamName: string;
  exposedName: string;
}

/** A provider's tool as one map key (provider ids hold no newline, so the split is unambiguous). */
export const toolKey = (providerId: string, upstreamName: string): string => `${providerId}\n${upstreamName}`;

/**
 * A provider's tag in disambiguated names: its name lowercased, runs of anything outside
 * `[a-z0-9]` turned into one `_`, trimmed of `_`, at most 24 characters; `p<id>` when nothing
 * is left (a name in another script).
 */
export function providerSlug(provider: Pick<NamingProvider, 'id' | 'name'>): string {
  const slug = provider.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, SLUG_MAX_LENGTH)
    .replace(/_+$/, '');
  return slug === ''
    ? `p${provider.id
        .replace(/[^a-z0-9]/gi, '')
        .slice(0, 8)
        .toLowerCase()}`
    : slug;
}

/** `text` if it fits in `max` characters, else its start and a short hash of the whole (so two long names stay apart). */
export function fitName(text: string, max = MAX_EXPOSED_NAME_LENGTH): string {
  if (text.length <= max) return text;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH);
  return `${text.slice(0, max - HASH_LENGTH - 1)}_${hash}`;
}

/**
 * The names a tool may get, best first. With a prefix: `<prefix>__<tool>`, then `<prefix>_2__<tool>`, …
 * Without: the upstream name itself, then `<slug>__<tool>`, `<slug>_2__<tool>`, … Each fits in 64
 * characters (the tag is kept whole, the tool's part is shortened).
 */
export function* nameCandidates(tool: OfferedTool): Generator<string> {
  const { provider, upstreamName } = tool;
  const tag = provider.namePrefix ?? providerSlug(provider);
  if (provider.namePrefix === null) yield fitName(upstreamName);
  for (let n = 1; n <= MAX_ATTEMPTS; n++) {
    const numbered = n === 1 ? tag : `${tag}_${n}`;
    yield `${numbered}${NAME_SEPARATOR}${fitName(upstreamName, MAX_EXPOSED_NAME_LENGTH - numbered.length - NAME_SEPARATOR.length)}`;
  }
}

/** The names chosen so far in a scope: by tool and by exposed name. */
export interface ScopeNames {
  byTool: ReadonlyMap<string, string>;
  byExposed: ReadonlyMap<string, { providerId: string; upstreamName: string }>;
  /** How many of each provider's tools have a name. */
  perProvider: ReadonlyMap<string, number>;
}

/** Indexes stored assignments. */
export function indexNames(assignments: readonly ToolNameAssignment[]): ScopeNames {
  const byTool = new Map<string, string>();
  const byExposed = new Map<string, { providerId: string; upstreamName: string }>();
  const perProvider = new Map<string, number>();
  for (const a of assignments) {
    byTool.set(toolKey(a.providerId, a.upstreamName), a.exposedName);
    byExposed.set(a.exposedName, { providerId: a.providerId, upstreamName: a.upstreamName });
    perProvider.set(a.providerId, (perProvider.get(a.providerId) ?? 0) + 1);
  }
  return { byTool, byExposed, perProvider };
}

/**
 * Names for the offered tools that have none yet, in the order given (the caller's routing order,
 * so on a first listing the provider that routing puts first keeps the bare name): each gets its
 * first candidate that no stored or newly chosen name holds. A tool whose candidates are all
 * taken is left out.
 */
export function assignNames(existing: ScopeNames, offered: readonly OfferedTool[]): ToolNameAssignment[] {
  const taken = new Set(existing.byExposed.keys());
  const named = new Set(existing.byTool.keys());
  const chosen: ToolNameAssignment[] = [];
  for (const tool of offered) {
    const key = toolKey(tool.provider.id, tool.upstreamName);
    if (named.has(key)) continue;
    for (const candidate of nameCandidates(tool)) {
      if (taken.has(candidate)) continue;
      taken.add(candidate);
      named.add(key);
      chosen.push({ providerId: tool.provider.id, upstreamName: tool.upstreamName, exposedName: candidate });
      break;
    }
  }
  return chosen;
}
