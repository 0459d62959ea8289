import type {
  EventBus,
  EventHandler,
  EventName,
  GatewayEvents,
  GatewayJobs,
  JobHandler,
  JobName,
  JobQueue,
} from '@agentgw/core';
import { currentTraceHeaders, withTraceHeaders } from './tracing.js';

/** Where the trace context rides in an event payload or job's data; removed before any handler sees it. */
export const TRACE_FIELD = 'traceContext';

type Carrier = Record<string, unknown> & { [TRACE_FIELD]?: Record<string, string> };

function isCarrier(value: unknown): value is Carrier {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The payload with the current trace context added (unchanged when tracing is off or there is no span). */
function attach<T>(payload: T): T {
  const headers = currentTraceHeaders();
  return headers && isCarrier(payload) ? { ...payload, [TRACE_FIELD]: headers } : payload;
}

/** The payload without the trace field, and the context it carried. */
function detach<T>(payload: T): { value: T; headers?: Record<string, string> } {
  if (!isCarrier(payload) || !(TRACE_FIELD in payload)) return { value: payload };
  const { [TRACE_FIELD]: headers, ...rest } = payload;
  return { value: rest as T, headers: typeof headers === 'object' && headers !== null ? headers : undefined };
}

/**
 * The bus with trace context across processes: `publish` adds the publisher's traceparent to
 * the payload, subscribers run in a span continuing it and see the payload without it.
 */
export function tracedBus(bus: EventBus): EventBus {
  return {
    publish: (event, payload) => bus.publish(event, attach(payload)),
    subscribe: <E extends EventName>(event: E, handler: EventHandler<E>) =>
      bus.subscribe(event, (payload: GatewayEvents[E]) => {
        const { value, headers } = detach(payload);
        if (!headers) return handler(value);
        return withTraceHeaders(`event ${event}`, headers, async () => handler(value));
      }),
    close: () => bus.close(),
  };
}

/**
 * The queue with trace context in job data: `enqueue` adds the producer's traceparent, a
 * consumer's batch runs in a span continuing the first job's trace, and handlers see the data
 * without it (the audit writer's validation never meets the field).
 */
export function tracedQueue(queue: JobQueue): JobQueue {
  return {
    enqueue: (name, data, options) => queue.enqueue(name, attach(data), options),
    cancel: (name, jobId) => queue.cancel(name, jobId),
    consume: <J extends JobName>(name: J, handler: JobHandler<J>, options?: Parameters<JobQueue['consume']>[2]) =>
      queue.consume(
        name,
        async (jobs: GatewayJobs[J][]) => {
          const detached = jobs.map(detach);
          const values = detached.map((d) => d.value);
          const headers = detached.find((d) => d.headers)?.headers;
          if (!headers) return handler(values);
          return withTraceHeaders(`job ${name}`, headers, () => handler(values));
        },
        options,
      ),
    barrier: (names, timeoutMs) => queue.barrier(names, timeoutMs),
    close: () => queue.close(),
  };
}
