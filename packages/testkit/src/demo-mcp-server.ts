import { z } from 'zod';
import { startMcpServer } from './mcp-server.js';

/**
 * `pnpm --filter @agentgw/testkit demo-mcp`: a real MCP server on 127.0.0.1 with two small
 * tools, for trying the gateway by hand (register it as a tool provider). Ctrl-C stops it.
 */
const server = await startMcpServer({
  name: 'demo-tools',
  tools: [
    {
      name: 'echo',
      description: 'Returns its text argument',
      inputSchema: { text: z.string() },
      handler: (args) => String(args.text),
    },
    {
      name: 'add',
      description: 'Adds two numbers',
      inputSchema: { a: z.number(), b: z.number() },
      handler: (args) => String(Number(args.a) + Number(args.b)),
    },
  ],
});
process.stdout.write(`demo MCP server listening at ${server.url}\n`);
const stop = (): void => void server.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
