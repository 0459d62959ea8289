import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { RealServer } from './servers.js';

const require = createRequire(import.meta.url);

/** A listed tool as the bench keeps it (in memory and in the gitignored cache). */
export type RealTool = Record<string, unknown> & { name: string };

/** The package's directory and version, found from its entry or its package.json (some packages export neither). */
export function packageInfo(pkg: string): { dir: string; version: string; bin: string } {
  const dir = packageDir(pkg);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    version: string;
    bin?: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (bin === undefined) throw new Error(`${pkg} has no bin`);
  return { dir, version: manifest.version, bin: join(dir, bin) };
}

function packageDir(pkg: string): string {
  // Resolving "<pkg>/package.json" fails for packages whose exports leave it out; the node_modules path does not.
  for (const base of require.resolve.paths(pkg) ?? []) {
    try {
      readFileSync(join(base, pkg, 'package.json'));
      return join(base, pkg);
    } catch {
      continue;
    }
  }
  return dirname(require.resolve(`${pkg}/package.json`));
}

/** Starts the server over stdio, lists every page of its tools, stops it; throws after `timeoutMs`. */
export async function listTools(server: RealServer, timeoutMs: number): Promise<RealTool[]> {
  const { bin } = packageInfo(server.pkg);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, ...(server.args ?? [])],
    // Only what a server needs to start: no credentials of this machine's environment reach it.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...server.env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'agentgw-bench', version: '0.1.0' });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${server.id}: no tool list within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([allPages(client, transport), timeout]);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  }
}

async function allPages(client: Client, transport: StdioClientTransport): Promise<RealTool[]> {
  await client.connect(transport);
  const tools: RealTool[] = [];
  let cursor: string | undefined;
  do {
    // Read loosely (the SDK's listTools rejects a whole page for one tool's odd schema): the index reads defensively anyway.
    const page = await client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      ResultSchema,
    );
    const listed = Array.isArray(page.tools) ? page.tools : [];
    tools.push(...listed.filter((tool): tool is RealTool => typeof tool?.name === 'string'));
    cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
  } while (cursor !== undefined);
  return tools;
}
