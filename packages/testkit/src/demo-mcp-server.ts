import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { startMcpServer } from './mcp-server.js';

/**
 * `pnpm --filter @agentgw/testkit demo-mcp`: a real MCP server on 127.0.0.1 with two small
 * tools, for trying the gateway by hand (register it as a tool provider). Ctrl-C stops it.
 * With `--background` it starts itself detached, prints only its URL on stdout (the pid and how
 * to stop it on stderr) and returns the terminal: `URL=$(pnpm --silent --filter … demo-mcp --background)`.
 */
if (process.argv.includes('--background')) {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening at (\S+)\n/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the demo MCP server exited with ${code} before it listened`)));
  });
  child.stdout.destroy();
  child.unref();
  process.stderr.write(`demo MCP server (pid ${child.pid}) listening at ${url}; stop it with: kill ${child.pid}\n`);
  process.stdout.write(`${url}\n`);
  process.exit(0);
}

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
// Started with --background, stdout is closed once the URL is read: a later write must not kill it.
process.stdout.on('error', () => {});
