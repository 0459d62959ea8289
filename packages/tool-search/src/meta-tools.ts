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
