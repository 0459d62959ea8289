import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestCertificates, redisTlsUnavailable, type LocalClusterSecurity } from './local-cluster-security.js';
import { localClusterUnavailable, startLocalRedisCluster, type LocalRedisCluster } from './local-redis-cluster.js';

const run = promisify(execFile);
const PASSWORD = 'cluster-test-pass-0123';
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const PROBE = fileURLToPath(new URL('./secured-cluster-probe.ts', import.meta.url));

const missing = process.env.TEST_REDIS_URL ? localClusterUnavailable() : 'TEST_REDIS_URL unset (integration tests off)';
if (missing) console.warn(`Redis Cluster with auth and TLS skipped: ${missing}`);
const tlsMissing = missing ? null : await redisTlsUnavailable('redis-server');
if (tlsMissing) console.warn(`Redis Cluster TLS part skipped (auth still tested): ${tlsMissing}`);

/**
 * A cluster secured as a managed one is: `--requirepass`/`--masterauth` on every node and, where
 * redis-server has TLS, TLS on every port (clients, replication, cluster bus) with a certificate of
 * a private CA made here by openssl. The service-side code reaches it from REDIS_URL alone
 * (`rediss://:<password>@seed`), the CA trusted through NODE_EXTRA_CA_CERTS as for one Redis.
 */
describe.skipIf(missing)(`Redis Cluster with a password${tlsMissing ? '' : ' and TLS'}`, () => {
  let dir: string;
  let cluster: LocalRedisCluster;
  let security: LocalClusterSecurity;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentgw-secured-cluster-'));
    security = { password: PASSWORD, ...(tlsMissing ? {} : { tls: await createTestCertificates(dir) }) };
    cluster = await startLocalRedisCluster(security);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('commands, sharded pub/sub and BullMQ each carry the password (and TLS) to every node', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', PROBE], {
      cwd: ROOT,
      timeout: 60_000,
      env: {
        PATH: process.env.PATH ?? '',
        REDIS_URL: cluster.url,
        REDIS_CLUSTER_NODES: cluster.nodesSetting,
        ...(security.tls ? { NODE_EXTRA_CA_CERTS: security.tls.ca } : {}),
      },
    });
    expect(cluster.url).toMatch(tlsMissing ? /^redis:\/\/:/ : /^rediss:\/\/:/);
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ primariesWithKeys: 3, heard: 'u1', jobsRun: 1 });
  }, 90_000);

  it('refuses a client without the password, and (with TLS) a plain-text one', async () => {
    const [port] = cluster.nodesSetting.split(',').map((node) => node.split(':')[1]!);
    const tlsArgs = security.tls ? ['--tls', '--cacert', security.tls.ca] : [];
    const noAuth = await run('redis-cli', [...tlsArgs, '-h', '127.0.0.1', '-p', port!, 'ping']);
    expect(noAuth.stdout).toMatch(/NOAUTH/);
    if (!security.tls) return;
    const plain = await run('redis-cli', ['-h', '127.0.0.1', '-p', port!, 'ping'], {
      env: { ...process.env, REDISCLI_AUTH: PASSWORD },
      timeout: 10_000,
    }).then(
      ({ stdout }) => stdout,
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    expect(plain).not.toMatch(/PONG/);
  }, 30_000);
});
