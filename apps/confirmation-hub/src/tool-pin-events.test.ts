import { silentLogger, systemClock, type ToolPinEvent } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { EventStreams } from './event-streams.js';
import { drain, viewers } from './event-streams.fixtures.js';

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
    const { admin, acmeAdmin, globexAdmin, alice } = viewers;
    const open = Object.entries({ admin, acmeAdmin, globexAdmin, alice }).map(([name, viewer]) => ({
      name,
      stream: streams.open(viewer, new AbortController().signal, new Date(Date.now() + 3_600_000)).stream,
    }));
    streams.deliverToolPin(event('pinned', 'first_seen'));
    streams.deliverToolPin(event('quarantined', 'lookup'));
    streams.deliverToolPin(event('pinned', 'lookup_v2', 'lookup'));
    const seen: Record<string, string[]> = {};
    for (const { name, stream } of open) {
      const text = await drain(stream);
      seen[name] = [...text.matchAll(/event: TOOL_DEFINITION_CHANGED\nid: [^\n]+\ndata: ([^\n]+)/g)].map(
        (m) => (JSON.parse(m[1]!) as ToolPinEvent).toolName!,
      );
    }
    expect(seen).toEqual({
      admin: ['lookup', 'lookup_v2'],
      acmeAdmin: ['lookup', 'lookup_v2'],
      globexAdmin: [],
      alice: [],
    });
    streams.stop();
  });
});
