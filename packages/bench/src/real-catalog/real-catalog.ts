import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listTools, packageInfo, type RealTool } from './list-tools.js';
import { REAL_SERVERS, type RealServer } from './servers.js';

/** One server's listed tools, under the provider id and title the bench gives it. */
export interface RealProvider {
  id: string;
  title: string;
  tools: RealTool[];
}

/** The listed catalog, and the servers that could not be listed here (with why). */
export interface RealCatalog {
  providers: RealProvider[];
  failed: { id: string; reason: string }[];
}

/**
 * Where the listed catalog is kept between runs: under node_modules (never committed), keyed by
 * each package's version and the server's start settings, so an upgrade lists again.
 */
const CACHE_FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  '../../node_modules/.cache/agentgw-bench/real-catalog.json',
);
const LIST_TIMEOUT_MS = 90_000;
/** Servers started at once: each is a node process, and the machine is shared. */
const CONCURRENCY = 6;

const cacheKey = (server: RealServer) => JSON.stringify([server, packageInfo(server.pkg).version]);

/** Lists every server of REAL_SERVERS (or reads the cached lists of those unchanged since). */
export async function realCatalog(log: (line: string) => void): Promise<RealCatalog> {
  const cached = readCache();
  const providers: RealProvider[] = [];
  const failed: { id: string; reason: string }[] = [];
  const queue = [...REAL_SERVERS];
  const worker = async () => {
    for (let server = queue.shift(); server !== undefined; server = queue.shift()) {
      const key = cacheKey(server);
      const hit = cached[key];
      if (hit !== undefined) {
        providers.push({ id: server.id, title: server.title, tools: hit });
        continue;
      }
      try {
        const tools = await listTools(server, LIST_TIMEOUT_MS);
        cached[key] = tools;
        providers.push({ id: server.id, title: server.title, tools });
        log(`listed ${server.id}: ${tools.length} tools`);
      } catch (error) {
        failed.push({ id: server.id, reason: (error as Error).message.split('\n')[0]!.slice(0, 160) });
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  writeCache(cached);
  const order = new Map(REAL_SERVERS.map((server, i) => [server.id, i]));
  providers.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  return { providers, failed };
}

function readCache(): Record<string, RealTool[]> {
  try {
    return JSON.parse(readFileSync(CACHE_FILE, 'utf8')) as Record<string, RealTool[]>;
  } catch {
    return {};
  }
}

function writeCache(entries: Record<string, RealTool[]>): void {
  mkdirSync(dirname(CACHE_FILE), { recursive: true });
  writeFileSync(CACHE_FILE, JSON.stringify(entries));
}
