import { createHash } from 'node:crypto';
import type { ListItem } from '../provider-lists.js';

/** Each input schema object's digest, kept as long as the provider-list cache keeps the object. */
const schemaDigests = new WeakMap<object, string>();

/**
 * The search index's cache key for a caller's visible tool set: SHA-256 over what the index reads
 * and a search answers of each tool (name, titles, description, input schema), in order. Callers
 * who may see the same tools share an index; any difference in the set or in a definition (a new
 * description, a pin approved) is another key, so a search never answers from another set's
 * index. The merged list copies each tool per request (exposed names) but keeps its schema
 * object, so the schema's digest is computed once per cached list, not per request.
 */
export function visibleSetKey(tools: readonly ListItem[]): string {
  const hash = createHash('sha256');
  for (const tool of tools) {
    const annotations = tool.annotations;
    const annotationTitle = typeof annotations === 'object' && annotations !== null ? (annotations as Record<string, unknown>).title : undefined;
    hash.update(JSON.stringify([tool.name, tool.title, annotationTitle, tool.description, schemaDigest(tool.inputSchema)])).update('\n');
  }
  return hash.digest('base64url');
}

function schemaDigest(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return JSON.stringify(schema ?? null);
  let digest = schemaDigests.get(schema);
  if (digest === undefined) {
    digest = createHash('sha256').update(JSON.stringify(schema)).digest('base64url');
    schemaDigests.set(schema, digest);
  }
  return digest;
}
