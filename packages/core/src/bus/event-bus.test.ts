import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GatewayEvents } from '../events.js';
import type { Logger } from '../logger.js';
import type { RedisTarget } from '../redis/redis-target.js';
import { testClusterTarget } from '../redis/local-redis-cluster.js';
import { MemoryEventBus, RedisEventBus, type EventBus } from './index.js';

const redisUrl = process.env.TEST_REDIS_URL;
/** One Redis and, when the global setup started one, a local Redis Cluster (sharded pub/sub). */
const targets: [string, RedisTarget][] = [];
if (redisUrl) targets.push(['redis', { url: redisUrl }]);
const clusterTarget = testClusterTarget();
if (clusterTarget) targets.push(['redis-cluster', clusterTarget]);

/** A logger whose lines the test can read. */
function recordingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

type Factory = (logger?: Logger) => EventBus;
const adapters: [string, Factory][] = [['memory', (logger) => new MemoryEventBus({ logger })]];
for (const [name, target] of targets) {
  adapters.push([name, (logger) => new RedisEventBus({ ...target, prefix: `test-${randomUUID()}`, logger })]);
}

const changed = (agentId: string): GatewayEvents['agent.changed'] => ({ agentId, change: 'disabled' });

describe.each(adapters)('EventBus contract (%s)', (_name, makeBus) => {
  const buses: EventBus[] = [];
  const open = (logger?: Logger) => {
    const bus = makeBus(logger);
    buses.push(bus);
    return bus;
  };
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((b) => b.close()));
  });

  it('delivers a published payload to a subscriber', async () => {
    const bus = open();
    const received: unknown[] = [];
    await bus.subscribe('agent.changed', (p) => {
      received.push(p);
    });
    await bus.publish('agent.changed', changed('a1'));
    await vi.waitFor(() => expect(received).toEqual([changed('a1')]));
  });

  it('delivers only the event subscribed to', async () => {
    const bus = open();
    const received: string[] = [];
    await bus.subscribe('user.changed', (p) => {
      received.push(p.userId);
    });
    await bus.publish('agent.changed', changed('a1'));
    await bus.publish('user.changed', { userId: 'u1' });
    await vi.waitFor(() => expect(received).toEqual(['u1']));
  });

  it('fans out to every subscriber, each with its own copy', async () => {
    const bus = open();
    const seen: { who: string; payload: GatewayEvents['rules.changed'] }[] = [];
    for (const who of ['a', 'b', 'c']) {
      await bus.subscribe('rules.changed', (payload) => {
        seen.push({ who, payload: { ...payload } });
        // A subscriber that mutates its payload must not change what the others get.
        payload.subjectId = `mutated by ${who}`;
      });
    }
    await bus.publish('rules.changed', { subjectType: 'agent', subjectId: 'x' });
    await vi.waitFor(() => expect(seen).toHaveLength(3));
    expect(seen.map((s) => s.who).sort()).toEqual(['a', 'b', 'c']);
    for (const s of seen) expect(s.payload).toEqual({ subjectType: 'agent', subjectId: 'x' });
  });

  it('stops delivering to a handler once it unsubscribes', async () => {
    const bus = open();
    const gone: string[] = [];
    const kept: string[] = [];
    const unsubscribe = await bus.subscribe('apikey.changed', (p) => {
      gone.push(p.keyId);
    });
    await bus.subscribe('apikey.changed', (p) => {
      kept.push(p.keyId);
    });
    await bus.publish('apikey.changed', { keyId: 'k1' });
    await vi.waitFor(() => expect(gone).toEqual(['k1']));
    await unsubscribe();
    await bus.publish('apikey.changed', { keyId: 'k2' });
    // Delivery is ordered, so once the kept handler has k2 the other one would have it too.
    await vi.waitFor(() => expect(kept).toEqual(['k1', 'k2']));
    expect(gone).toEqual(['k1']);
  });

  it('keeps the other subscription when one function is subscribed twice and unsubscribed once', async () => {
    const bus = open();
    const received: string[] = [];
    const handler = (p: GatewayEvents['user.changed']) => {
      received.push(p.userId);
    };
    const first = await bus.subscribe('user.changed', handler);
    await bus.subscribe('user.changed', handler);
    await first();
    await bus.publish('user.changed', { userId: 'u1' });
    await vi.waitFor(() => expect(received).toEqual(['u1']));
  });

  it('delivers to the others when a subscriber throws or rejects, and logs the failure', async () => {
    const { logger, lines } = recordingLogger();
    const bus = open(logger);
    const received: string[] = [];
    await bus.subscribe('providers.changed', () => {
      throw new Error('sync boom');
    });
    await bus.subscribe('providers.changed', async () => {
      throw new Error('async boom');
    });
    await bus.subscribe('providers.changed', (p) => {
      received.push(p.providerId ?? 'all');
    });
    await expect(bus.publish('providers.changed', { providerId: 'p1' })).resolves.toBeUndefined();
    await bus.publish('providers.changed', { providerId: null });
    await vi.waitFor(() => expect(received).toEqual(['p1', 'all']));
    await vi.waitFor(() => expect(lines.filter((l) => l.msg === 'event handler failed')).toHaveLength(4));
  });
});

describe.each(targets)('RedisEventBus across processes (%s)', (_name, target) => {
  it('delivers to a subscriber of another bus instance with the same prefix only', async () => {
    const prefix = `test-${randomUUID()}`;
    const publisher = new RedisEventBus({ ...target, prefix });
    const sameSpace = new RedisEventBus({ ...target, prefix });
    const otherSpace = new RedisEventBus({ ...target, prefix: `test-${randomUUID()}` });
    try {
      const here: string[] = [];
      const elsewhere: string[] = [];
      await sameSpace.subscribe('user.changed', (p) => {
        here.push(p.userId);
      });
      await otherSpace.subscribe('user.changed', (p) => {
        elsewhere.push(p.userId);
      });
      await publisher.publish('user.changed', { userId: 'u1' });
      await otherSpace.publish('user.changed', { userId: 'marker' });
      await vi.waitFor(() => expect(here).toEqual(['u1']));
      await vi.waitFor(() => expect(elsewhere).toEqual(['marker']));
    } finally {
      await Promise.all([publisher.close(), sameSpace.close(), otherSpace.close()]);
    }
  });

  // ioredis 5.8+ wrote a SUBSCRIBE issued during its connection's handshake ahead of the
  // handshake's INFO; the server refused that in subscriber mode, the connection reconnected, and
  // what was published meanwhile reached nobody. Subscribing at every moment of the handshake:
  it('delivers what is published as soon as subscribe resolves, whenever during the connection handshake it was called', async () => {
    const prefix = `test-${randomUUID()}`;
    const publisher = new RedisEventBus({ ...target, prefix });
    const warnings: Record<string, unknown>[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
    const buses: RedisEventBus[] = [];
    const received = new Set<string>();
    try {
      for (let i = 0; i < 40; i++) {
        const bus = new RedisEventBus({ ...target, prefix, logger });
        buses.push(bus);
        // 0-9 ms after the connection was opened: before, during and after its handshake.
        await new Promise((resolve) => setTimeout(resolve, i % 10));
        await bus.subscribe('agent.changed', (p) => void received.add(`${i}:${p.agentId}`));
        await publisher.publish('agent.changed', changed(`a${i}`));
      }
      // Every bus hears every later message too: at least its own one must have arrived.
      await vi.waitFor(() =>
        expect(Array.from({ length: 40 }, (_, i) => received.has(`${i}:a${i}`))).toEqual(Array(40).fill(true)),
      );
      expect(warnings.filter((w) => w.msg === 'redis event bus connection error')).toEqual([]);
    } finally {
      await Promise.all([publisher, ...buses].map((b) => b.close()));
    }
  });
});
