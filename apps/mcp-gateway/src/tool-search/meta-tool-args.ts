import { CALL_TOOL, SEARCH_RESULT_LIMITS, SEARCH_TOOLS } from '@agentgw/tool-search';
import { invalidParams } from '../rpc-errors.js';

/** A search_tools call's arguments, checked: a ranked search, or a browse of the providers or of one provider's tools. */
export type SearchToolsArgs =
  { mode: 'search'; query: string; limit: number } | { mode: 'browse'; provider: string | null };

/** Reads search_tools' arguments; anything else than the schema allows is a -32602 naming the field. */
export function searchToolsArgs(args: Record<string, unknown>): SearchToolsArgs {
  const { query, limit = SEARCH_RESULT_LIMITS.default, browse, provider } = args;
  if (browse !== undefined && typeof browse !== 'boolean')
    throw invalidParams(`${SEARCH_TOOLS}: arguments.browse must be a boolean`);
  if (provider !== undefined && (typeof provider !== 'string' || provider.length === 0 || browse !== true))
    throw invalidParams(`${SEARCH_TOOLS}: arguments.provider must be a non-empty string, given with browse: true`);
  if (browse === true) {
    if (query !== undefined) throw invalidParams(`${SEARCH_TOOLS}: arguments.query and browse exclude each other`);
    return { mode: 'browse', provider: provider ?? null };
  }
  if (typeof query !== 'string' || query.trim().length === 0)
    throw invalidParams(`${SEARCH_TOOLS}: arguments.query must be a non-empty string`);
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > SEARCH_RESULT_LIMITS.max) {
    throw invalidParams(`${SEARCH_TOOLS}: arguments.limit must be an integer from 1 to ${SEARCH_RESULT_LIMITS.max}`);
  }
  return { mode: 'search', query, limit };
}

/** A call_tool call's arguments, checked (the inner name and arguments are checked again by the normal tools/call path). */
export function callToolArgs(args: Record<string, unknown>): { name: string; arguments: Record<string, unknown> } {
  const { name, arguments: inner = {} } = args;
  if (typeof name !== 'string' || name.length === 0)
    throw invalidParams(`${CALL_TOOL}: arguments.name must be a non-empty string`);
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner))
    throw invalidParams(`${CALL_TOOL}: arguments.arguments must be an object`);
  return { name, arguments: inner as Record<string, unknown> };
}
