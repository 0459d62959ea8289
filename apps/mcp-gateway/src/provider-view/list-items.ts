import type { EgressRefusedError } from '@agentgw/core';
import type { UpstreamTarget } from '@agentgw/mcp-client';

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

/** What the caller must do before a per-user provider lists anything for them: the reason, and where to connect (null: connecting cannot help). */
export interface NeedsAuth {
  reason: string;
  authUrl: string | null;
}

/** How a list is asked for: the target carrying the lister's auth, or why they have none (resolved only when a list must be fetched). */
export type ListAuth = { kind: 'target'; target: UpstreamTarget } | ({ kind: 'needs_auth' } & NeedsAuth);

/**
 * Whose list is asked for: the one shared list (`user` null, fetched with the provider's own
 * auth), or one user's own list of a provider that answers each user with their own credential.
 */
export interface Lister {
  user: string | null;
  authOf: () => Promise<ListAuth>;
}

/** One provider's list of one kind as its lister sees it, or why there is none. */
export interface ProviderList {
  items: ListItem[] | null;
  failure: string | null;
  /** Set when the egress policy refused the upstream's address (the proxy answers 403, not 502). */
  refusal: EgressRefusedError | null;
  /** Set when there is no list because the user has no usable auth for the provider. */
  needsAuth: NeedsAuth | null;
}

/** A tool listing of a provider for one lister: as `ToolListing`, or why it cannot be had until the user connects. */
export type ListerToolListing = ToolListing | { kind: 'needs_auth'; needsAuth: NeedsAuth };
