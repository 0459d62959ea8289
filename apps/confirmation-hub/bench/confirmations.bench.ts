/**
 * Benchmark (loopback only, bounded):
 *  1. confirm-to-release: a call held by one process (held-call-server.ts, the gate on
 *     PostgreSQL + Redis), confirmed through another (a confirmation-hub replica, its main.ts)
 *     over HTTP; latency from sending the confirm to the held call's release, p50/p95/p99.
 *  2. idle SSE clients: N streams open on one hub process; heartbeat lateness (arrival minus
 *     the heartbeat's own timestamp, over every client and tick) and the hub's resident memory.
 *
 * Variables: BENCH_DATABASE_URL (default TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_REDIS_URL (default TEST_REDIS_URL or redis://127.0.0.1:6379), BENCH_ROUNDS (300),
 * BENCH_SSE_CLIENTS (10000, at most 15000), BENCH_HEARTBEAT_MS (5000), BENCH_HEARTBEATS (3).
 */
import { request, type IncomingMessage } from 'node:http';
import { readFileSync } from 'node:fs';
import { createAuth } from '@agentgw/auth';
import { loadConfig, MemoryEventBus, newId, type HeldCall } from '@agentgw/core';
import {
  createScratchDatabase,
  isolatedRedisUrl,
  startHolder,
  startHub,
  TEST_SECRETS,
  type ReplicaProcess,
} from '../src/replica-processes.js';
import { SseEventReader } from '@agentgw/testkit';

const databaseUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const rounds = Number(process.env.BENCH_ROUNDS ?? 300);
const clients = Math.min(Number(process.env.BENCH_SSE_CLIENTS ?? 10_000), 15_000);
const heartbeatMs = Number(process.env.BENCH_HEARTBEAT_MS ?? 5_000);
const heartbeats = Number(process.env.BENCH_HEARTBEATS ?? 3);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const summary = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(1)} ms  p95 ${percentile(s, 95).toFixed(1)} ms  p99 ${percentile(s, 99).toFixed(1)} ms  max ${s.at(-1)!.toFixed(1)} ms  (n=${s.length})`;
};
const now = () => performance.timeOrigin + performance.now();
const rssMiB = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) / 1024;
};

const database = await createScratchDatabase(databaseUrl);
const processes: ReplicaProcess[] = [];
try {
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: isolatedRedisUrl(redisUrl, 14),
    CONFIRMATION_TIMEOUT_MS: '60000',
    SSE_HEARTBEAT_MS: String(heartbeatMs),
    LOG_LEVEL: 'warn',
  };
  // debug: the hub logs how long each heartbeat fan-out took.
  const [hub, holder] = await Promise.all([startHub({ ...env, LOG_LEVEL: 'debug' }), startHolder(env)]);
  processes.push(hub, holder);
  const auth = await createAuth({
    config: loadConfig({ ...TEST_SECRETS, LOG_LEVEL: 'silent' }),
    db: database.handle.db,
    bus: new MemoryEventBus(),
  });

  // Users straight into the table (no password hashing): one confirmer, and the SSE crowd.
  const users = Array.from({ length: Math.max(1, Math.ceil(clients / 10)) }, (_, i) => ({
    id: newId(),
    email: `bench-${i}-${Date.now()}@example.test`,
    password_hash: 'x',
    roles: [] as [],
    tenant_id: 'bench',
  }));
  for (let i = 0; i < users.length; i += 1_000)
    await database.handle.db
      .insertInto('users')
      .values(users.slice(i, i + 1_000))
      .execute();
  const tokens = await Promise.all(
    users.map((u) => auth.signUserToken({ id: u.id, email: u.email, roles: [], tenantId: 'bench' })),
  );
  const confirmer = { id: users[0]!.id, token: tokens[0]! };

  // 1. confirm-to-release across processes.
  console.log(
    `\n1) confirm → release: held on process ${holder.child.pid}, confirmed through hub process ${hub.child.pid} (PostgreSQL + Redis)`,
  );
  const stream = new SseEventReader(
    await fetch(`${hub.url}/api/v1/stream`, { headers: { authorization: `Bearer ${confirmer.token}` } }),
  );
  await stream.nextOf('connected');
  const release: number[] = [];
  const confirmRoundTrip: number[] = [];
  const warmup = 20;
  for (let i = 0; i < rounds + warmup; i++) {
    const call: HeldCall = {
      auditId: newId(),
      agentId: 'bench-agent',
      userId: confirmer.id,
      endUserId: confirmer.id,
      tenantId: 'bench',
      providerId: 'bench',
      toolName: 'bench_tool',
      arguments: { i },
      risk: 'medium',
    };
    const held = fetch(`${holder.url}/hold`, { method: 'POST', body: JSON.stringify({ call }) }).then(
      (r) => r.json() as Promise<{ releasedAt: number }>,
    );
    const required = await stream.nextOf('CONFIRMATION_REQUIRED', 10_000);
    const id = (required.data as { id: string }).id;
    const sentAt = now();
    const answered = await fetch(`${hub.url}/api/v1/confirmation/${id}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${confirmer.token}` },
    });
    const answeredAt = now();
    if (answered.status !== 200) throw new Error(`confirm answered ${answered.status}`);
    await answered.arrayBuffer();
    const { releasedAt } = await held;
    await stream.nextOf('CONFIRMATION_RESOLVED', 10_000);
    if (i >= warmup) {
      release.push(releasedAt - sentAt);
      confirmRoundTrip.push(answeredAt - sentAt);
    }
  }
  await stream.close();
  console.log(`   confirm sent → held call released:  ${summary(release)}`);
  console.log(`   confirm HTTP round trip (for scale): ${summary(confirmRoundTrip)}`);
  const p99 = percentile(
    [...release].sort((a, b) => a - b),
    99,
  );
  console.log(`   aim p99 ≤ 50 ms: ${p99 <= 50 ? 'met' : 'NOT met'}`);

  // 2. idle SSE clients on one hub process.
  console.log(`\n2) ${clients} idle SSE clients on hub process ${hub.child.pid}, heartbeat every ${heartbeatMs} ms`);
  const rssBefore = rssMiB(hub.child.pid!);
  const lateness: number[] = [];
  const beatsPerClient = new Array<number>(clients).fill(0);
  const open: IncomingMessage[] = [];
  let failed = 0;
  const connectOne = (i: number) =>
    new Promise<void>((resolve) => {
      const req = request(
        `${hub.url}/api/v1/stream`,
        { headers: { authorization: `Bearer ${tokens[i % tokens.length]}` }, agent: false },
        (res) => {
          if (res.statusCode !== 200) {
            failed += 1;
            res.resume();
            return resolve();
          }
          open.push(res);
          res.setEncoding('utf8');
          let buffer = '';
          let resolved = false;
          res.on('data', (chunk: string) => {
            const at = now();
            buffer += chunk;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const frame = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              if (frame.startsWith('event: connected') && !resolved) {
                resolved = true;
                resolve();
              } else if (frame.startsWith('event: heartbeat')) {
                const data = JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as { timestamp: string };
                lateness.push(at - Date.parse(data.timestamp));
                beatsPerClient[i] = (beatsPerClient[i] ?? 0) + 1;
              }
            }
          });
        },
      );
      req.on('error', () => {
        failed += 1;
        resolve();
      });
      req.end();
    });
  const connectStarted = Date.now();
  for (let i = 0; i < clients; i += 250) {
    await Promise.all(Array.from({ length: Math.min(250, clients - i) }, (_, k) => connectOne(i + k)));
  }
  console.log(
    `   connected ${open.length} (failed ${failed}) in ${((Date.now() - connectStarted) / 1000).toFixed(1)} s`,
  );
  const rssConnected = rssMiB(hub.child.pid!);
  lateness.length = 0;
  beatsPerClient.fill(0);
  await new Promise((r) => setTimeout(r, heartbeatMs * heartbeats + heartbeatMs / 2));
  const rssAfter = rssMiB(hub.child.pid!);
  const missing = beatsPerClient.filter((n) => n < heartbeats).length;
  const ticks = Math.round(lateness.length / Math.max(1, open.length));
  console.log(`   heartbeat lateness (arrival − sent timestamp, every client × ${ticks} ticks): ${summary(lateness)}`);
  console.log(`   clients that missed a heartbeat: ${missing}`);
  const fanOuts = hub
    .output()
    .split('\n')
    .filter((line) => line.includes('"heartbeat sent"'))
    .map((line) => JSON.parse(line) as { streams: number; ms: number })
    .filter((l) => l.streams >= open.length)
    .map((l) => l.ms);
  console.log(
    `   hub-side fan-out of one heartbeat to ${open.length} streams (enqueue loop): ${fanOuts.map((ms) => `${ms} ms`).join(', ')}`,
  );
  console.log(
    `   hub resident memory: ${rssBefore.toFixed(0)} MiB before, ${rssConnected.toFixed(0)} MiB with ${open.length} streams ` +
      `(${(((rssConnected - rssBefore) * 1024) / Math.max(1, open.length)).toFixed(1)} KiB per stream), ${rssAfter.toFixed(0)} MiB after ${heartbeats} heartbeats`,
  );
  for (const res of open) res.destroy();
  await auth.close();
} finally {
  await Promise.all(processes.map((p) => p.stop('SIGTERM')));
  await database.drop();
}
