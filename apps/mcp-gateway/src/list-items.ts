import type { EgressRefusedError } from '@agentgw/core';

/* The shapes of an upstream's lists, shared by the shared and the per-user list caches and every reader of a list. */

/** The lists an upstream offers that the unified endpoint merges. */
export type ListKind = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

/** The upstream method that returns each list. */
export const LIST_METHODS: Record<ListKind, string> = {
  tools: 'tools/list',
  resources: 'resources/list',
  resourceTemplates: 'resources/templates/list',
  prompts: 'prompts/list',
};

/** One tool, resource, template or prompt as the upstream described it (passed on unchanged). */
export type ListItem = Record<string, unknown> & { name?: unknown; uri?: unknown; uriTemplate?: unknown };

/** Whether a provider offers a tool name, by its list: listed, not listed, or no list to tell (the fetch failed or was refused). */
export type ToolListing =
  | { kind: 'listed' }
  | { kind: 'unlisted' }
  | { kind: 'unavailable'; failure: string; refusal: EgressRefusedError | null };
