/**
 * The browse mode of tool search (issue 35.3): when a search does not find the tool, the caller
 * looks through the catalog instead, first the providers with a one-line summary each, then one
 * provider's tools. Pure: the caller says which provider each visible tool comes from.
 */

/** A visible tool with its provider, as the caller resolved it. */
export interface BrowseEntry {
  name: string;
  description: string;
  provider: { name: string; description: string | null };
}

/** One provider as browse lists it. */
export interface ProviderSummary {
  provider: string;
  summary: string;
  tools: number;
}

/** One tool as browse lists it: its name and the first sentence of its description. */
export interface ToolSummary {
  name: string;
  summary: string;
}

/** Bounds on what browse returns: a provider's summary line, a tool's, and how many tool names a summary names. */
export const BROWSE_LIMITS = { summaryChars: 160, namesInSummary: 6, tools: 200 } as const;

/** The first sentence of a text on one line, at most BROWSE_LIMITS.summaryChars (an ellipsis when cut). */
export function oneLine(text: string): string {
  const flat = text
    .slice(0, 4 * BROWSE_LIMITS.summaryChars)
    .replace(/\s+/g, ' ')
    .trim();
  const sentence = /^(.+?[.!?])(?:\s|$)/.exec(flat)?.[1] ?? flat;
  return sentence.length <= BROWSE_LIMITS.summaryChars
    ? sentence
    : `${sentence.slice(0, BROWSE_LIMITS.summaryChars - 1).trimEnd()}…`;
}

/**
 * Each provider of the entries, in the order first seen, with how many tools it offers and a
 * summary: the operator's description of it, else the names of its first tools.
 */
export function providerSummaries(entries: readonly BrowseEntry[]): ProviderSummary[] {
  const byProvider = new Map<string, { description: string | null; names: string[] }>();
  for (const { name, provider } of entries) {
    const known = byProvider.get(provider.name) ?? { description: provider.description, names: [] };
    known.names.push(name);
    byProvider.set(provider.name, known);
  }
  return [...byProvider].map(([provider, { description, names }]) => ({
    provider,
    summary:
      description !== null && description.trim().length > 0
        ? oneLine(description)
        : oneLine(
            `${names.length} tools: ${names.slice(0, BROWSE_LIMITS.namesInSummary).join(', ')}${names.length > BROWSE_LIMITS.namesInSummary ? ', …' : ''}`,
          ),
    tools: names.length,
  }));
}

/** The tools of one provider (at most BROWSE_LIMITS.tools), each with a one-line summary; null when no entry has that provider. */
export function providerTools(entries: readonly BrowseEntry[], provider: string): ToolSummary[] | null {
  const tools = entries.filter((entry) => entry.provider.name === provider);
  if (tools.length === 0) return null;
  return tools.slice(0, BROWSE_LIMITS.tools).map(({ name, description }) => ({ name, summary: oneLine(description) }));
}
