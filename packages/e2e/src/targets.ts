import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrateToLatest, openDatabase } from '@agentgw/db';
import { pgbouncerUnavailable, startLocalPgBouncer, type LocalPgBouncer } from '@agentgw/db/local-pgbouncer';
import {
  freePort,
  localClusterUnavailable,
  startLocalRedisCluster,
  startOnFreePort,
  startProcess,
  waitForHealthy,
  type LocalRedisCluster,
  type ManagedProcess,
} from '@agentgw/testkit';
import { sql } from 'kysely';
import { readRouterConf, runtimeNginxConf, type RouterUpstream } from './nginx-config.js';

/** The repository root: `pnpm gateway` and every service's main.ts are run from here. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export type TargetName = 'all-in-one' | 'distributed' | 'cluster';

/** The bootstrap admin every target creates on first boot (ADMIN_EMAIL / ADMIN_PASSWORD). */
export const ADMIN = { email: 'e2e-admin@example.com', password: 'e2e-admin-password-1' };

/** A running gateway under test, reached only over HTTP at `baseUrl`. */
export interface GatewayTarget {
  name: TargetName;
  baseUrl: string;
  /** One line per process started: what, where, PID. */
  describe(): string[];
  stop(): Promise<void>;
}

/** Why a target cannot run here, or null when it can. */
export function unavailable(name: TargetName): string | null {
  if (name === 'all-in-one') return null;
  const missing: string[] = [];
  if (!process.env.TEST_DATABASE_URL) missing.push('TEST_DATABASE_URL');
  if (!process.env.TEST_REDIS_URL) missing.push('TEST_REDIS_URL');
  if (!findBinary('nginx')) missing.push('nginx (Debian nginx-light)');
  if (!findBinary('redis-server')) missing.push('redis-server (a private one is started for the Redis restart)');
  if (name === 'cluster') {
    const cluster = localClusterUnavailable();
    if (cluster) missing.push(cluster);
    const pooler = pgbouncerUnavailable();
    if (pooler) missing.push(pooler);
  }
  return missing.length === 0 ? null : `${name} target skipped: ${missing.join(', ')} not available`;
}

/** Which targets this run covers: E2E_TARGET=all-in-one|distributed|cluster picks one, unset runs all. */
export function selected(name: TargetName): boolean {
  const wanted = process.env.E2E_TARGET;
  if (wanted && wanted !== 'all-in-one' && wanted !== 'distributed' && wanted !== 'cluster')
    throw new Error(`E2E_TARGET must be all-in-one, distributed or cluster, not ${wanted}`);
  return !wanted || wanted === name;
}

function findBinary(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/sbin']) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

const baseEnv = (): Record<string, string> => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() });

/** Where `pnpm --filter @agentgw/dashboard build` writes the console: the all-in-one serves it, the router's copy is taken from it. */
export const CONSOLE_DIST = join(ROOT, 'apps', 'dashboard', 'dist');

/**
 * A started OAuth connection's lifetime on every target (`OAUTH_FLOW_TTL_MS`): long enough for a
 * browser to sign in at the provider, short enough that the connected-accounts suite can wait a
 * state out (its expired-state check).
 */
export const OAUTH_FLOW_TTL_MS = 20_000;

/**
 * Builds the web console from the current sources (about 2 s), so the target serves the console
 * its tests click through. A failed build is reported and left to the console tests to fail on:
 * the API suites do not need it.
 */
function buildConsole(): void {
  try {
    execFileSync('pnpm', ['--silent', '--filter', '@agentgw/dashboard', 'build'], { cwd: ROOT, stdio: 'pipe' });
  } catch (error) {
    console.warn(
      `[e2e] the console did not build; its tests will fail: ${String((error as { stderr?: Buffer }).stderr ?? error).slice(0, 2_000)}`,
    );
  }
}

/** The all-in-one as the README starts it: `pnpm gateway start --port N --data-dir DIR`, embedded database. */
export async function startAllInOneUnderTest(): Promise<GatewayTarget> {
  buildConsole();
  const dataDir = await mkdtemp(join(tmpdir(), 'agentgw-e2e-aio-'));
  // The public URL names the port, so each attempt on a new port is a new start (startOnFreePort).
  const { process: gateway, port } = await startOnFreePort(
    (port) =>
      startProcess({
        name: 'all-in-one',
        command: 'pnpm',
        args: ['--silent', 'gateway', 'start', '--port', String(port), '--data-dir', dataDir],
        cwd: ROOT,
        env: {
          ...baseEnv(),
          ADMIN_EMAIL: ADMIN.email,
          ADMIN_PASSWORD: ADMIN.password,
          LOG_LEVEL: 'warn',
          GATEWAY_PUBLIC_URL: `http://127.0.0.1:${port}`,
          OAUTH_FLOW_TTL_MS: String(OAUTH_FLOW_TTL_MS),
        },
        detached: true,
      }),
    (port) => `http://127.0.0.1:${port}/health`,
    120_000,
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    name: 'all-in-one',
    baseUrl,
    describe: () => [
      `all-in-one: pnpm gateway start --port ${port} --data-dir ${dataDir} (pid ${gateway.pid}, embedded database)`,
    ],
    async stop() {
      await gateway.stop('SIGTERM');
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** One service process of the distributed topology; restartable on its own port. */
export interface ServiceProcess {
  app: string;
  port: number;
  url: string;
  current(): ManagedProcess;
  /** SIGKILL (a crash) or SIGTERM (graceful); resolves when it is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and waits for /health. */
  restart(): Promise<void>;
}

/** A private redis-server (never the machine's shared one), restartable by PID. */
export interface PrivateRedis {
  url: string;
  pid(): number;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The replicas of every service, as both distributed topologies start them. */
export interface ReplicatedTarget extends GatewayTarget {
  services: Record<'admin-api' | 'audit-writer', ServiceProcess> & {
    /** Each invoke-proxy replica reaches its own vault replica: the connected-accounts suite races a token refresh across both. */
    'invoke-proxy': [ServiceProcess, ServiceProcess];
    vault: [ServiceProcess, ServiceProcess];
    'mcp-gateway': [ServiceProcess, ServiceProcess];
    'confirmation-hub': [ServiceProcess, ServiceProcess];
  };
  databaseName: string;
}

export interface DistributedTarget extends ReplicatedTarget {
  name: 'distributed';
  redis: PrivateRedis;
}

/** The third topology: the same services on a local Redis Cluster, PostgreSQL through PgBouncer (transaction pooling). */
export interface ClusterTarget extends ReplicatedTarget {
  name: 'cluster';
  cluster: LocalRedisCluster;
  pooler: LocalPgBouncer;
}

/** What the services' Redis and database are: one private Redis and direct connections, or a cluster and a pooler. */
type Backing =
  | { topology: 'distributed'; redis: PrivateRedis }
  | { topology: 'cluster'; cluster: LocalRedisCluster; pooler: LocalPgBouncer };

/** The services' environment for a backing (migrations always run on the direct connection). */
function backingEnv(backing: Backing, databaseUrl: string): Record<string, string> {
  if (backing.topology === 'distributed') return { DATABASE_URL: databaseUrl, REDIS_URL: backing.redis.url };
  return {
    DATABASE_URL: backing.pooler.urlFor(databaseUrl),
    // Ten processes x 4 client connections to the pooler, which holds its few server connections.
    DATABASE_POOL_MAX: '4',
    REDIS_URL: backing.cluster.url,
    REDIS_CLUSTER_NODES: backing.cluster.nodesSetting,
  };
}

async function startBacking(topology: Backing['topology'], serverUrl: string): Promise<Backing> {
  if (topology === 'distributed') return { topology, redis: await startRedis() };
  const cluster = await startLocalRedisCluster();
  try {
    return { topology, cluster, pooler: await startLocalPgBouncer(serverUrl, 8) };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

async function stopBacking(backing: Backing | undefined): Promise<void> {
  if (backing?.topology === 'distributed') await backing.redis.stop();
  if (backing?.topology === 'cluster') await Promise.all([backing.pooler.stop(), backing.cluster.stop()]);
}

async function startRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let proc: ManagedProcess;
  const launch = async () => {
    proc = startProcess({
      name: 'redis-server',
      command: findBinary('redis-server')!,
      args: ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
      cwd: tmpdir(),
      env: baseEnv(),
    });
    const deadline = Date.now() + 10_000;
    while (!proc.output().includes('Ready to accept connections')) {
      if (Date.now() > deadline || proc.child.exitCode !== null)
        throw new Error(`redis-server did not start:\n${proc.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await launch();
  return {
    url,
    pid: () => proc.pid,
    async restart() {
      await proc.stop('SIGTERM');
      await launch();
    },
    stop: () => proc.stop('SIGTERM'),
  };
}

const SERVICE_SECRETS = {
  JWT_SECRET: `e2e-distributed-jwt-secret-${randomBytes(12).toString('hex')}`,
};
/** The key boundary as infra deploys it: the credential key to the vault alone, the platform key to the others and the vault (OAuth client secrets). */
const SEALING_KEYS = {
  CREDENTIAL_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  PLATFORM_SECRETS_KEY: randomBytes(32).toString('hex'),
};
const sealingKeysOf = (app: string): Record<string, string> =>
  app === 'vault' ? SEALING_KEYS : { PLATFORM_SECRETS_KEY: SEALING_KEYS.PLATFORM_SECRETS_KEY };

/**
 * The distributed topology: a fresh PostgreSQL database (created, migrated, dropped on stop), a
 * private Redis, every service its own `main.ts` process (two replicas of each, the audit
 * writer alone), behind Debian's nginx running a runtime copy of infra/nginx/nginx.conf.
 */
export function startDistributedUnderTest(): Promise<DistributedTarget> {
  return startReplicated('distributed') as Promise<DistributedTarget>;
}

/** The distributed topology on a local Redis Cluster (3 primaries, 3 replicas) and PgBouncer in transaction pooling. */
export function startClusterUnderTest(): Promise<ClusterTarget> {
  return startReplicated('cluster') as Promise<ClusterTarget>;
}

async function startReplicated(topology: Backing['topology']): Promise<DistributedTarget | ClusterTarget> {
  buildConsole();
  const serverUrl = process.env.TEST_DATABASE_URL!;
  const databaseName = `agentgw_e2e_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const server = await openDatabase({ url: serverUrl });
    try {
      await sql.raw(statement).execute(server.db);
    } finally {
      await server.close();
    }
  };
  await admin(`create database ${databaseName}`);
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${databaseName}`;
  const databaseUrl = dbUrl.toString();
  const started: ServiceProcess[] = [];
  let backing: Backing | undefined;
  let nginx: ManagedProcess | undefined;
  const dir = await mkdtemp(join(tmpdir(), 'agentgw-e2e-nginx-'));
  const cleanup = async () => {
    await nginx?.stop('SIGTERM');
    await Promise.all(started.map((s) => s.kill('SIGTERM')));
    await stopBacking(backing);
    await admin(`drop database if exists ${databaseName} with (force)`).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    // The migrate command's own code (`pnpm --filter @agentgw/db migrate` runs migrateToLatest).
    const fresh = await openDatabase({ url: databaseUrl });
    try {
      await migrateToLatest(fresh.db);
    } finally {
      await fresh.close();
    }
    backing = await startBacking(topology, serverUrl);
    const routerPort = await freePort();
    const baseUrl = `http://127.0.0.1:${routerPort}`;
    const common = {
      ...baseEnv(),
      ...SERVICE_SECRETS,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      ...backingEnv(backing, databaseUrl),
      EGRESS_POLICY: 'allow-private',
      TRUSTED_PROXIES: '127.0.0.1/32',
      GATEWAY_PUBLIC_URL: baseUrl,
      OAUTH_FLOW_TTL_MS: String(OAUTH_FLOW_TTL_MS),
    };
    const service = async (app: string, extra: Record<string, string> = {}): Promise<ServiceProcess> => {
      const spawnOn = (port: number) =>
        startProcess({
          name: `${app}:${port}`,
          command: process.execPath,
          args: ['--import', 'tsx', `apps/${app}/src/main.ts`],
          cwd: ROOT,
          env: { ...common, ...sealingKeysOf(app), ...extra, PORT: String(port) },
        });
      const first = await startOnFreePort(spawnOn, (port) => `http://127.0.0.1:${port}/health`, 120_000);
      let proc = first.process;
      const url = `http://127.0.0.1:${first.port}`;
      const handle: ServiceProcess = {
        app,
        port: first.port,
        url,
        current: () => proc,
        kill: (signal = 'SIGKILL') => proc.stop(signal),
        restart: async () => {
          proc = spawnOn(first.port);
          await waitForHealthy(`${url}/health`, proc, 120_000);
        },
      };
      started.push(handle);
      return handle;
    };
    // admin-api first: it runs the bootstrap admin; then the rest two at a time (two cores).
    const adminApi = await service('admin-api', { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
    const [vault, auditWriter] = await Promise.all([service('vault'), service('audit-writer')]);
    const [invokeProxy, mcp1] = await Promise.all([
      service('invoke-proxy', { VAULT_URL: vault.url }),
      service('mcp-gateway', { VAULT_URL: vault.url }),
    ]);
    const [mcp2, hub1] = await Promise.all([
      service('mcp-gateway', { VAULT_URL: vault.url }),
      service('confirmation-hub'),
    ]);
    const hub2 = await service('confirmation-hub');
    // A second admin-api behind the router: the steps of an MCP client's OAuth sign-in (issue 23) land on either.
    const adminApi2 = await service('admin-api');
    // Second invoke-proxy and vault replicas, paired (connected accounts: two replicas race one token refresh through Redis's lock).
    const vault2 = await service('vault');
    const invokeProxy2 = await service('invoke-proxy', { VAULT_URL: vault2.url });

    const address = (s: ServiceProcess) => `127.0.0.1:${s.port}`;
    const upstreams: Record<RouterUpstream, string[]> = {
      admin_api: [address(adminApi), address(adminApi2)],
      invoke_proxy: [address(invokeProxy), address(invokeProxy2)],
      vault: [address(vault), address(vault2)],
      audit_writer: [address(auditWriter)],
      mcp_gateway: [address(mcp1), address(mcp2)],
      confirmation_hub: [address(hub1), address(hub2)],
    };
    // Run as root (CI), nginx's workers are `nobody`: they must reach the temp paths inside.
    await chmod(dir, 0o755);
    for (const kind of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(join(dir, `${kind}_temp`));
    // The console as infra/nginx/Dockerfile copies it in, readable by the workers.
    const consoleRoot = join(dir, 'html');
    if (existsSync(join(CONSOLE_DIST, 'index.html'))) await cp(CONSOLE_DIST, consoleRoot, { recursive: true });
    const confPath = join(dir, 'nginx.conf');
    await writeFile(
      confPath,
      runtimeNginxConf(await readRouterConf(), { upstreams, port: routerPort, dir, consoleRoot }),
    );
    const nginxBin = findBinary('nginx')!;
    execFileSync(nginxBin, ['-t', '-q', '-e', 'stderr', '-p', dir, '-c', confPath], { stdio: 'pipe' });
    nginx = startProcess({
      name: 'nginx',
      command: nginxBin,
      args: ['-e', 'stderr', '-p', dir, '-c', confPath, '-g', 'daemon off;'],
      cwd: dir,
      env: baseEnv(),
    });
    await waitForHealthy(`${baseUrl}/health`, nginx, 20_000);
    const router = nginx;
    const replicated = {
      baseUrl,
      databaseName,
      services: {
        'admin-api': adminApi,
        'invoke-proxy': [invokeProxy, invokeProxy2],
        vault: [vault, vault2],
        'audit-writer': auditWriter,
        'mcp-gateway': [mcp1, mcp2],
        'confirmation-hub': [hub1, hub2],
      },
      stop: cleanup,
    } satisfies Omit<ReplicatedTarget, 'name' | 'describe'>;
    const processes = () => started.map((s) => `  ${s.app} ${s.url} (pid ${s.current().pid})`);
    const router_ = `nginx ${baseUrl} (pid ${router.pid}, runtime copy of infra/nginx/nginx.conf)`;
    if (backing.topology === 'distributed') {
      const redis = backing.redis;
      return {
        ...replicated,
        name: 'distributed',
        redis,
        describe: () => [
          `distributed: ${router_}, PostgreSQL database ${databaseName}, private redis ${redis.url} (pid ${redis.pid()})`,
          ...processes(),
        ],
      };
    }
    const { cluster, pooler } = backing;
    return {
      ...replicated,
      name: 'cluster',
      cluster,
      pooler,
      describe: () => [
        `cluster: ${router_}, PostgreSQL database ${databaseName} through PgBouncer (transaction pooling, pid ${pooler.pid}), Redis Cluster ${cluster.nodes.map((n) => `${n.port} (pid ${n.pid})`).join(', ')}`,
        ...processes(),
      ],
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
