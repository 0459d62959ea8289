import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

/**
 * Tools that need the client's own features, each listed only to a client that declared the
 * capability it uses (as capability-aware servers like server-everything do): `ask_model`
 * (sampling), `ask_user` (form elicitation), `list_roots` (roots). Each sends its request on the
 * call's own stream and answers with what the client said. For `startMcpServer({ setup })`.
 */
export function registerClientFeatureTools(server: McpServer): void {
  const askModel = server.registerTool(
    'ask_model',
    { description: 'asks the client to sample', inputSchema: { prompt: z.string() } },
    async ({ prompt }, extra) => {
      const sampled = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 20 },
        },
        CreateMessageResultSchema,
      );
      const content = sampled.content as { type: string; text?: string };
      return { content: [{ type: 'text' as const, text: `model said: ${content.text ?? ''}` }] };
    },
  );
  const askUser = server.registerTool(
    'ask_user',
    { description: 'asks the user for a name', inputSchema: {} },
    async (_args, extra) => {
      const answer = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: 'Your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          },
        },
        ElicitResultSchema,
      );
      return {
        content: [{ type: 'text' as const, text: `user ${answer.action}: ${String(answer.content?.name ?? '')}` }],
      };
    },
  );
  const listRoots = server.registerTool(
    'list_roots',
    { description: 'lists the client roots', inputSchema: {} },
    async (_args, extra) => {
      const { roots } = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
      return { content: [{ type: 'text' as const, text: roots.map((r) => r.uri).join(',') }] };
    },
  );
  const gated: [RegisteredTool, 'sampling' | 'elicitation' | 'roots'][] = [
    [askModel, 'sampling'],
    [askUser, 'elicitation'],
    [listRoots, 'roots'],
  ];
  server.server.oninitialized = () => {
    const declared = server.server.getClientCapabilities() ?? {};
    for (const [tool, capability] of gated) if (declared[capability] === undefined) tool.disable();
  };
}
