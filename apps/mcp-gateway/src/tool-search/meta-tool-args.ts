import { CALL_TOOL, SEARCH_RESULT_LIMITS, SEARCH_TOOLS } from '@agentgw/tool-search';
import { invalidParams } from '../rpc-errors.js';

/** A search_tools call's arguments, checked. */
export interface SearchToolsArgs {
  query: string;
  limit: number;
}

/** Reads search_tools' arguments; anything else than the schema allows is a -32602 naming the field. */
export function searchToolsArgs(args: Record<string, unknown>): SearchToolsArgs {
  const { query, limit = SEARCH_RESULT_LIMITS.default } = args;
  if (typeof query !== 'string' || query.trim().length === 0)
    throw invalidParams(`${SEARCH_TOOLS}: arguments.query must be a non-empty string`);
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > SEARCH_RESULT_LIMITS.max) {
    throw invalidParams(`${SEARCH_TOOLS}: arguments.limit must be an integer from 1 to ${SEARCH_RESULT_LIMITS.max}`);
  }
  return { query, limit };
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
