import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../net/free-port.js';
import { cliOptions, securityArgs, seedUrl, type LocalClusterSecurity } from './local-cluster-security.js';
import { redisTargetFrom, type RedisTarget } from './redis-target.js';

const run = promisify(execFile);

/** One node of a local test cluster: its loopback port and the PID the harness stops it by. */
export interface LocalClusterNode {
  port: number;
  pid: number;
}

/**
 * A Redis Cluster of three primaries and three replicas on loopback ports, for tests and the e2e
 * cluster topology: every node is a `redis-server --cluster-enabled yes` child of this process in a
 * temp directory, stopped by its PID.
 */
export interface LocalRedisCluster {
  /** The seed list as REDIS_CLUSTER_NODES takes it (`127.0.0.1:<port>,…`). */
  nodesSetting: string;
  /** A `redis://` URL of one seed (REDIS_URL beside REDIS_CLUSTER_NODES). */
  url: string;
  nodes: LocalClusterNode[];
  /** The port of the primary that serves `key`'s slot. */
  primaryOf(key: string): Promise<number>;
  /** Stops the primary on `port` by PID (SIGKILL) and waits until one of its replicas serves its slots. */
  failOver(port: number): Promise<{ promoted: number }>;
  stop(): Promise<void>;
}

/** Why a local cluster cannot start here, or null when `redis-server` and `redis-cli` are both found. */
export function localClusterUnavailable(): string | null {
  const missing = ['redis-server', 'redis-cli'].filter((name) => !findBinary(name));
  return missing.length === 0 ? null : `${missing.join(' and ')} not found (Debian's redis-server package)`;
}

function findBinary(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/local/bin']) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

/** The path of an installed binary the cluster cannot start without. */
function requireBinary(name: string): string {
  const path = findBinary(name);
  if (path === null) throw new Error(`local Redis Cluster: ${name} is not installed`);
  return path;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function cli(security: LocalClusterSecurity, port: number, ...args: string[]): Promise<string> {
  const options = cliOptions(security);
  const { stdout } = await run(
    requireBinary('redis-cli'),
    [...options.args, '-h', '127.0.0.1', '-p', String(port), ...args],
    {
      env: options.env,
    },
  );
  return stdout;
}

/** Polls `check` every 100 ms until it holds; throws `what` after `timeoutMs`. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`local Redis Cluster: ${what} within ${timeoutMs} ms`);
    await pause(100);
  }
}

/** Spawns one node (registered in `children` at once, so a failed start still stops it) and waits until it accepts connections. */
function startNode(
  dir: string,
  port: number,
  busPort: number,
  children: Map<number, ChildProcess>,
  security: LocalClusterSecurity,
): Promise<ChildProcess> {
  const child = spawn(
    requireBinary('redis-server'),
    [
      '--bind',
      '127.0.0.1',
      ...securityArgs(security, port),
      '--cluster-port',
      String(busPort),
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      // Small, so a stopped primary's replica takes over within about a second.
      '--cluster-node-timeout',
      '1000',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.set(port, child);
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`redis-server on ${port} exited (${code}):\n${output}`)));
  });
}

/**
 * Starts six nodes, joins them with `redis-cli --cluster create … --cluster-replicas 1` and waits
 * until every slot is served and every replica in sync. A free port can be taken by another
 * process before a node binds it: the whole start is tried up to three times.
 */
export async function startLocalRedisCluster(security: LocalClusterSecurity = {}): Promise<LocalRedisCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(security);
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

async function startOnce(security: LocalClusterSecurity): Promise<LocalRedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'agentgw-redis-cluster-'));
  const children = new Map<number, ChildProcess>();
  const stop = async () => {
    await Promise.all(
      [...children.values()].map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await gone;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const nodes: { port: number; busPort: number }[] = [];
    for (let i = 0; i < 6; i++) nodes.push({ port: await freePort(), busPort: await freePort() });
    const ports = nodes.map(({ port }) => port);
    await Promise.all(nodes.map(({ port, busPort }) => startNode(dir, port, busPort, children, security)));
    const { args, env } = cliOptions(security);
    await run(
      requireBinary('redis-cli'),
      [
        ...args,
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      { env },
    );
    await until(async () => {
      const states = await Promise.all(ports.map((p) => cli(security, p, 'cluster', 'info')));
      if (!states.every((s) => s.includes('cluster_state:ok'))) return false;
      const roles = await Promise.all(ports.map((p) => cli(security, p, 'info', 'replication')));
      return roles.every((r) => r.includes('role:master') || r.includes('master_link_status:up'));
    }, 'every slot served and every replica in sync');
  } catch (err) {
    await stop();
    throw err;
  }
  const anyAlive = (): number => {
    for (const [port, c] of children) if (c.exitCode === null && c.signalCode === null) return port;
    throw new Error('local Redis Cluster: no node is running');
  };
  const primaryOf = async (key: string): Promise<number> => {
    const slot = Number((await cli(security, anyAlive(), 'cluster', 'keyslot', key)).trim());
    const shards = await cli(security, anyAlive(), 'cluster', 'slots');
    return slotOwner(shards, slot);
  };
  return {
    nodesSetting: [...children.keys()].map((p) => `127.0.0.1:${p}`).join(','),
    url: seedUrl(security, anyAlive()),
    nodes: [...children.entries()].map(([port, child]) => ({ port, pid: pidOf(child) })),
    primaryOf,
    async failOver(port) {
      const child = children.get(port);
      if (!child) throw new Error(`no local cluster node on ${port}`);
      const replicas = (await cli(security, port, 'info', 'replication'))
        .split('\n')
        .flatMap((line) => /^slave\d+:ip=[^,]+,port=(\d+)/.exec(line.trim())?.[1] ?? []);
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
      let promoted = 0;
      await until(async () => {
        for (const replica of replicas) {
          const info = await cli(security, Number(replica), 'info', 'replication');
          if (info.includes('role:master')) promoted = Number(replica);
        }
        if (!promoted) return false;
        return (await cli(security, promoted, 'cluster', 'info')).includes('cluster_state:ok');
      }, `a replica of ${port} promoted`);
      return { promoted };
    },
    stop,
  };
}

/** A started node's process id (spawn leaves it unset only when the start itself failed, which startNode has thrown on). */
function pidOf(child: ChildProcess): number {
  if (child.pid === undefined) throw new Error('local Redis Cluster: a node has no process id');
  return child.pid;
}

/** The port serving `slot` in a `redis-cli cluster slots` answer (start, end, primary ip, port, id, …). */
function slotOwner(answer: string, slot: number): number {
  const lines = answer.trim().split('\n');
  for (let i = 0; i + 3 < lines.length; i++) {
    const [start = '', end = '', , port = ''] = lines.slice(i, i + 4).map((l) => l.trim());
    const numbers = [start, end, port].every((field) => /^\d+$/.test(field));
    if (numbers && slot >= Number(start) && slot <= Number(end)) return Number(port);
  }
  throw new Error(`no node serves slot ${slot}`);
}

/** The local test cluster's target when the vitest global setup started one (see local-redis-cluster.global-setup.ts). */
export function testClusterTarget(): RedisTarget | undefined {
  const nodes = process.env.TEST_REDIS_CLUSTER_NODES;
  const url = process.env.TEST_REDIS_CLUSTER_URL;
  if (!nodes || !url) return undefined;
  return redisTargetFrom({ REDIS_URL: url, REDIS_CLUSTER_NODES: nodes.split(',') });
}
