import { createHash } from 'node:crypto';
import { trimOldest } from './bounded-map.js';

/** A tool as a provider listed it (passed on unchanged). */
type ListItem = Record<string, unknown>;

/** A provider-list object's number (given on first sight) and its exposed copies by exposed name. */
interface Origin {
  id: number;
  copies: Map<string, ListItem>;
}

/** Per provider-list object: a refetched list's objects are new objects, so they get new numbers. */
const origins = new WeakMap<ListItem, Origin>();
/** Each exposed copy's token for the key: its origin's number and its exposed name. */
const copyTokens = new WeakMap<ListItem, string>();
/** Exposed names kept per tool: one per name scope that sees it; past this the oldest copy is made again when next asked for. */
const MAX_COPIES_PER_TOOL = 8;
let nextOriginId = 0;

/**
 * A provider's tool under its exposed name, as the merged tools/list serves it: made once per
 * provider-list object and exposed name, then the same object on every request (no per-request
 * copies; like the provider-list objects themselves, never mutated). Provider lists are replaced,
 * never mutated, when an upstream's tools change (the gateway's list cache; pins pass the objects on).
 */
export function exposedTool(tool: ListItem, exposedName: string): ListItem {
  let origin = origins.get(tool);
  if (origin === undefined) {
    origin = { id: nextOriginId++, copies: new Map() };
    origins.set(tool, origin);
  }
  let copy = origin.copies.get(exposedName);
  if (copy === undefined) {
    copy = { ...tool, name: exposedName };
    copyTokens.set(copy, `o${origin.id}\u0000${exposedName}`);
    origin.copies.set(exposedName, copy);
    trimOldest(origin.copies, MAX_COPIES_PER_TOOL);
  }
  return copy;
}

/**
 * The search index's cache key for a caller's visible tool set: SHA-256 over, for each tool in
 * order, the identity of the provider-list object it was copied from and its exposed name. No
 * definition is read or hashed per request, yet the key changes exactly when the set does: a tool
 * added, hidden by policy or a pin, renamed, or refetched with another definition (a new object).
 * Callers who may see the same tools share an index, and a search never answers from another
 * set's index. A tool not made by `exposedTool` is keyed by a digest of its definition.
 */
export function visibleSetKey(tools: readonly ListItem[]): string {
  let text = '';
  for (const tool of tools) text += `${copyTokens.get(tool) ?? `d${definitionDigest(tool)}`}\n`;
  return createHash('sha256').update(text).digest('base64url');
}

/** What the index reads and a search answers of a tool (name, titles, description, input schema), hashed. */
function definitionDigest(tool: ListItem): string {
  const annotations = tool.annotations;
  const annotationTitle =
    typeof annotations === 'object' && annotations !== null
      ? (annotations as Record<string, unknown>).title
      : undefined;
  return createHash('sha256')
    .update(JSON.stringify([tool.name, tool.title, annotationTitle, tool.description, tool.inputSchema ?? null]))
    .digest('base64url');
}
