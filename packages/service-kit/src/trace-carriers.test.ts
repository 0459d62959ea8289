import {
  BullJobQueue,
  RedisEventBus,
  silentLogger,
  type EventBus,
  type GatewayEvents,
  type JobQueue,
} from '@agentgw/core';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inProcessAdapters } from './in-process-adapters.js';
import { TRACE_FIELD, tracedBus, tracedQueue } from './trace-carriers.js';
import { initTracing, withTraceHeaders, type Tracing } from './tracing.js';

const logger = silentLogger();
const redisUrl = process.env.TEST_REDIS_URL;
const backends: [string, () => { bus: EventBus; queue: JobQueue }][] = [
  ['in-process', () => inProcessAdapters({ logger })],
];
if (redisUrl) {
  const prefix = `trace-${randomBytes(4).toString('hex')}`;
  backends.push([
    'Redis + BullMQ',
    () => ({
      bus: new RedisEventBus({ url: redisUrl, logger, prefix }),
      queue: new BullJobQueue({ url: redisUrl, logger, prefix }),
    }),
  ]);
}

describe.each(backends)('trace context through events and jobs (%s)', (_name, open) => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let bus: EventBus;
  let queue: JobQueue;

  beforeAll(() => {
    tracing = initTracing({ serviceName: 'carriers', spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const adapters = open();
    bus = tracedBus(adapters.bus);
    queue = tracedQueue(adapters.queue);
  });
  afterAll(async () => {
    await bus.close();
    await queue.close();
    await tracing.shutdown();
  });

  it('a subscriber continues the publisher trace and never sees the carrier field', async () => {
    exporter.reset();
    const received: GatewayEvents['confirmation.resolved'][] = [];
    const unsubscribe = await bus.subscribe('confirmation.resolved', (payload) => void received.push(payload));
    const payload: GatewayEvents['confirmation.resolved'] = {
      id: 'c1',
      status: 'confirmed',
      confirmedBy: null,
      userId: 'u1',
      endUserId: null,
      tenantId: null,
      timestamp: new Date(0).toISOString(),
    };
    await withTraceHeaders('producer', undefined, () => bus.publish('confirmation.resolved', payload));
    await vi.waitFor(() =>
      expect(exporter.getFinishedSpans().map((s) => s.name)).toContain('event confirmation.resolved'),
    );
    expect(received).toEqual([payload]);
    expect(TRACE_FIELD in (received[0] as object)).toBe(false);
    const producer = exporter.getFinishedSpans().find((s) => s.name === 'producer');
    const consumer = exporter.getFinishedSpans().find((s) => s.name === 'event confirmation.resolved');
    expect(consumer?.spanContext().traceId).toBe(producer?.spanContext().traceId);
    expect(consumer?.parentSpanContext?.spanId).toBe(producer?.spanContext().spanId);
    await unsubscribe();
  });

  it('a job consumer continues the producer trace and gets the data without the carrier field', async () => {
    exporter.reset();
    const seen: unknown[] = [];
    const consumer = await queue.consume('confirmation-timeout', async (jobs) => void seen.push(...jobs));
    await withTraceHeaders('producer', undefined, () =>
      queue.enqueue('confirmation-timeout', { confirmationId: 'c2' }),
    );
    await vi.waitFor(
      () => expect(exporter.getFinishedSpans().map((s) => s.name)).toContain('job confirmation-timeout'),
      { timeout: 10_000 },
    );
    expect(seen).toEqual([{ confirmationId: 'c2' }]);
    const producer = exporter.getFinishedSpans().find((s) => s.name === 'producer');
    const job = exporter.getFinishedSpans().find((s) => s.name === 'job confirmation-timeout');
    expect(job?.spanContext().traceId).toBe(producer?.spanContext().traceId);
    expect(job?.parentSpanContext?.spanId).toBe(producer?.spanContext().spanId);
    await consumer.close();
  });

  it('adds nothing without a current span', async () => {
    const seen: unknown[] = [];
    const consumer = await queue.consume('push', async (jobs) => void seen.push(...jobs));
    await queue.enqueue('push', { userId: 'u', title: 't', body: 'b', data: {} });
    await vi.waitFor(() => expect(seen).toEqual([{ userId: 'u', title: 't', body: 'b', data: {} }]), {
      timeout: 10_000,
    });
    await consumer.close();
  });
});
