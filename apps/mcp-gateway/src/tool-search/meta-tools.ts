import type { ListItem } from '../provider-view/list-items.js';
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
    description:
      `Find the tools for a task among those you may use here. Describe the task in a few words; the best matches come back ranked, each with its name, description and input schema. ` +
      `Run one with ${CALL_TOOL}. A tool marked "held": true waits for a human to confirm each call.`,
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          minLength: 1,
          description: 'The task, in plain words (e.g. "open an issue about the login bug").',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: SEARCH_RESULT_LIMITS.max,
          default: SEARCH_RESULT_LIMITS.default,
          description: 'How many tools to return.',
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        tools: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
      required: ['tools'],
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
