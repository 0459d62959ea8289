import { migrateToLatest, openDatabase } from '@agentgw/db';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  localClusterUnavailable,
  startLocalRedisCluster,
  type LocalRedisCluster,
} from '@agentgw/core/local-redis-cluster';
import { sql } from 'kysely';
import { freePort } from '@agentgw/core/free-port';
import { imageNodeFlags } from './image-node-flags.js';
import { benchProcessEnv, waitHealthy, type BenchProcessOptions, type GatewayUnderTest } from './gateway-under-test.js';
import { processesNamed, processTree } from './process-stats.js';

const SERVICES = ['admin-api', 'invoke-proxy', 'mcp-gateway', 'vault', 'confirmation-hub', 'audit-writer'] as const;
/** The router's upstream servers in infra/nginx/nginx.conf, per service (re-resolved names, here loopback ports). */
const ROUTER_NAMES: Record<(typeof SERVICES)[number], string> = {
  'admin-api': 'admin-api:7601 resolve',
  'invoke-proxy': 'invoke-proxy:7602 resolve',
  'mcp-gateway': 'mcp-gateway:7603 resolve',
  vault: 'vault:7604 resolve',
  'confirmation-hub': 'confirmation-hub:7605 resolve',
  'audit-writer': 'audit-writer:7606 resolve',
};
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Its own logical Redis database, so the bench's queues never meet the tests' (database 0). */
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/11';

async function redisAnswers(): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  const { Socket } = await import('node:net');
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(Number(port || 6379), hostname, () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** The router config: infra/nginx/nginx.conf with loopback addresses for the service names and a loopback listener. */
function routerConfig(port: number, ports: Record<string, number>, dir: string): string {
  let conf = readFileSync(new URL('../../../infra/nginx/nginx.conf', import.meta.url), 'utf8')
    .replace('listen 80;', `listen 127.0.0.1:${port};`)
    .replace(/^\s*resolver .*$/m, '')
    .replace(/^\s*access_log .*$/m, '  access_log off;')
    .replace('pid /tmp/nginx.pid;', `pid ${join(dir, 'nginx.pid')};`);
  for (const service of SERVICES) conf = conf.replace(ROUTER_NAMES[service], `127.0.0.1:${ports[service]}`);
  return conf;
}

export interface DistributedOptions extends BenchProcessOptions {
  repo: string;
  /** `single`: the Redis at BENCH_REDIS_URL; `cluster`: a local six-node Redis Cluster started (and stopped) here, as e2e's cluster topology starts it. */
  redis: 'single' | 'cluster';
}

/** The services' Redis settings and how to stop what was started for them, or why it cannot run. */
async function redisFor(
  kind: DistributedOptions['redis'],
): Promise<{ env: Record<string, string>; cluster?: LocalRedisCluster } | string> {
  if (kind === 'single')
    return (await redisAnswers()) ? { env: { REDIS_URL } } : `Redis does not answer at ${REDIS_URL}`;
  const missing = localClusterUnavailable();
  if (missing) return missing;
  const cluster = await startLocalRedisCluster();
  return { env: { REDIS_URL: cluster.url, REDIS_CLUSTER_NODES: cluster.nodesSetting }, cluster };
}

/**
 * The six services (their bundled main.ts, as the containers run them) on PostgreSQL and Redis behind
 * nginx with infra/nginx/nginx.conf, on one Redis or a local Redis Cluster. Answers why it cannot run (a string) when PostgreSQL,
 * Redis or nginx is missing.
 */
export async function startDistributed(options: DistributedOptions): Promise<GatewayUnderTest | string> {
  if (spawnSync('nginx', ['-v']).error) return 'nginx is not installed (Debian: apt-get install nginx-light)';
  const redis = await redisFor(options.redis);
  if (typeof redis === 'string') return redis;
  const database = `agentgw_bench_${randomBytes(5).toString('hex')}`;
  const withDatabase = (name: string) => Object.assign(new URL(PG_URL), { pathname: `/${name}` }).toString();
  try {
    const admin = await openDatabase({ url: PG_URL });
    try {
      await sql.raw(`create database ${database}`).execute(admin.db);
    } finally {
      await admin.close();
    }
  } catch {
    await redis.cluster?.stop();
    return `PostgreSQL does not answer at ${PG_URL}`;
  }
  const fresh = await openDatabase({ url: withDatabase(database) });
  await migrateToLatest(fresh.db);
  await fresh.close();

  const dir = mkdtempSync(join(tmpdir(), 'agentgw-bench-router-'));
  const ports = Object.fromEntries(
    await Promise.all(SERVICES.map(async (s) => [s, await freePort()] as const)),
  ) as Record<string, number>;
  // The key boundary as infra deploys it: the credential key to the vault alone, the platform key to the others.
  const keys = {
    CREDENTIAL_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    PLATFORM_SECRETS_KEY: randomBytes(32).toString('hex'),
  };
  const keysOf = (service: string) =>
    service === 'vault' ? keys : { PLATFORM_SECRETS_KEY: keys.PLATFORM_SECRETS_KEY };
  const env = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'development',
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATABASE_URL: withDatabase(database),
    ...redis.env,
    VAULT_URL: `http://127.0.0.1:${ports.vault}`,
    ...benchProcessEnv(options),
  };
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(children.filter((c) => c.exitCode === null).map((c) => once(c, 'exit')));
    rmSync(dir, { recursive: true, force: true });
    await redis.cluster?.stop();
    const admin = await openDatabase({ url: PG_URL });
    try {
      await sql.raw(`drop database if exists ${database} with (force)`).execute(admin.db);
    } finally {
      await admin.close();
    }
  };
  try {
    for (const service of SERVICES) {
      const cwd = join(options.repo, 'apps', service);
      // As the images run them: the bundle (dist/main.js), not tsx, so both topologies run the same
      // compiled form (the all-in-one's `pnpm start` runs its bundle too).
      const built = spawnSync(
        process.execPath,
        [join(options.repo, 'scripts', 'bundle.mjs'), '--if-stale', '--link-externals', 'src/main.ts'],
        { cwd, stdio: 'inherit' },
      );
      if (built.status !== 0) throw new Error(`bundling ${service} failed`);
      const child = spawn(process.execPath, [...imageNodeFlags(options.repo), join(cwd, 'dist', 'main.js')], {
        cwd,
        // node's flags and MALLOC_ARENA_MAX as infra/Dockerfile sets them.
        env: { ...env, ...keysOf(service), PORT: String(ports[service]), MALLOC_ARENA_MAX: '2' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
    }
    await Promise.all(
      SERVICES.map((s) =>
        waitHealthy(`http://127.0.0.1:${ports[s]}`, () => children.every((c) => c.exitCode === null)),
      ),
    );
    const routerPort = await freePort();
    writeFileSync(join(dir, 'nginx.conf'), routerConfig(routerPort, ports, dir));
    const router = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(router);
    const base = `http://127.0.0.1:${routerPort}`;
    await waitHealthy(base, () => router.exitCode === null);
    const services = children.slice(0, SERVICES.length);
    return {
      name: `distributed (six services behind nginx, PostgreSQL, ${options.redis === 'cluster' ? 'Redis Cluster 3+3' : 'Redis'})`,
      base,
      pids: () => children.flatMap((c) => processTree(c.pid!)),
      servers: () => services.map((c) => c.pid!),
      parts: () => [
        ...SERVICES.map((name, i) => ({ name, pids: processTree(services[i]!.pid!) })),
        { name: 'nginx', pids: processTree(router.pid!) },
        { name: 'PostgreSQL', pids: processesNamed(['postgres']), shared: true as const },
        { name: 'Redis', pids: processesNamed(['redis-server']), shared: true as const },
      ],
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
