import type { Viewer } from '@agentgw/confirmations';
import { silentLogger, systemClock, type ToolPinEvent } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { EventStreams } from './event-streams.js';

const viewers: Record<string, Viewer> = {
  admin: { userId: 'root', roles: ['admin'], tenantId: null },
  acmeAdmin: { userId: 'acme-admin', roles: ['tenant_admin'], tenantId: 'acme' },
  globexAdmin: { userId: 'globex-admin', roles: ['tenant_admin'], tenantId: 'globex' },
  alice: { userId: 'alice', roles: [], tenantId: 'acme' },
};

/** Everything already enqueued on a stream, as text. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = '';
  for (;;) {
    const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 20))]);
    if (next === null || next.done) break;
    text += new TextDecoder().decode(next.value);
  }
  reader.releaseLock();
  return text;
}

const event = (change: ToolPinEvent['change'], toolName: string, renamedFrom: string | null = null): ToolPinEvent => ({
  providerId: 'p1',
  tenantId: 'acme',
  toolName,
  change,
  renamedFrom,
  timestamp: new Date().toISOString(),
});

describe('TOOL_DEFINITION_CHANGED on the event stream', () => {
  it("reaches admins and the provider's tenant admins only, and leaves plain first-sight pins out", async () => {
    const streams = new EventStreams({ heartbeatMs: 60_000, clock: systemClock, logger: silentLogger() });
    const open = Object.entries(viewers).map(([name, viewer]) => ({ name, stream: streams.open(viewer, new AbortController().signal, new Date(Date.now() + 3_600_000)).stream }));
    streams.deliverToolPin(event('pinned', 'first_seen'));
    streams.deliverToolPin(event('quarantined', 'lookup'));
    streams.deliverToolPin(event('pinned', 'lookup_v2', 'lookup'));
    const seen: Record<string, string[]> = {};
    for (const { name, stream } of open) {
      const text = await drain(stream);
      seen[name] = [...text.matchAll(/event: TOOL_DEFINITION_CHANGED\nid: [^\n]+\ndata: ([^\n]+)/g)].map((m) => (JSON.parse(m[1]!) as ToolPinEvent).toolName!);
    }
    expect(seen).toEqual({ admin: ['lookup', 'lookup_v2'], acmeAdmin: ['lookup', 'lookup_v2'], globexAdmin: [], alice: [] });
    streams.stop();
  });
});
