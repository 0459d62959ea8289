import { SEARCH_GUIDANCE } from './search-guidance.js';

/* The search surface's meta-tools as a client lists them: what the gateway serves and the benchmark measures. */

/** The meta-tools' names: with the search surface on, a tools/call of one of these is answered by the gateway. */
export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';

/** The most results one search returns (and its default). */
export const SEARCH_RESULT_LIMITS = { max: 20, default: 5 } as const;

/** The meta-tools as `tools/list` shows them when the search surface is on (the whole surface a client sees). */
export const META_TOOLS: readonly Record<string, unknown>[] = Object.freeze([
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
