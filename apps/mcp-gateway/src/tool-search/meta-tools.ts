import { SEARCH_GUIDANCE } from '@agentgw/tool-search';
import type { ListItem } from '../provider-lists.js';
import { invalidParams } from '../rpc-errors.js';

/** The meta-tools' names: with the search surface on, a tools/call of one of these is answered by the gateway. */
export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';

/** The most results one search returns (and its default). */
export const SEARCH_RESULT_LIMITS = { max: 20, default: 5 } as const;

/** The meta-tools as `tools/list` shows them when the search surface is on (the whole surface a client sees). */
export const META_TOOLS: readonly ListItem[] = Object.freeze([
  {
    name: SEARCH_TOOLS,
    title: 'Search tools',
    description: `${SEARCH_GUIDANCE.description} Run one with ${CALL_TOOL}. A tool marked "held": true waits for a human to confirm each call.`,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: SEARCH_GUIDANCE.query },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: SEARCH_RESULT_LIMITS.max,
          default: SEARCH_RESULT_LIMITS.default,
          description: 'How many tools to return.',
        },
        browse: { type: 'boolean', description: 'Instead of a query: list the providers, or with provider its tools.' },
        provider: { type: 'string', minLength: 1, description: 'With browse: the provider whose tools to list.' },
      },
      additionalProperties: false,
    },
    // A search answers tools (and, when weak, a note and categories); a browse answers providers, or one provider's tools.
    outputSchema: {
      type: 'object',
      properties: {
        tools: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
        providers: {
          type: 'array',
          items: { type: 'object', properties: { provider: { type: 'string' } }, required: ['provider'] },
        },
      },
    },
    annotations: { title: 'Search tools', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description: `Call a tool found with ${SEARCH_TOOLS} by its exact name, with arguments matching its input schema. The call is checked, held for confirmation and recorded exactly as a direct call of that tool.`,
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: `The tool's name, as ${SEARCH_TOOLS} returned it.` },
        arguments: { type: 'object', description: "The tool's arguments." },
      },
      required: ['name'],
      additionalProperties: false,
    },
    annotations: { title: 'Call a tool', openWorldHint: true },
  },
]);

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
