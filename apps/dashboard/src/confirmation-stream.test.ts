import { describe, expect, it } from 'vitest';
import { createApiClient } from './api.js';
import {
  openConfirmationStream,
  toConfirmation,
  type PendingConfirmation,
  type StreamStatus,
} from './confirmation-stream.js';

describe('toConfirmation', () => {
  it('reads the spec payload: id, tool.name, risk.level, timestamp and the arguments', () => {
    expect(
      toConfirmation({
        id: 'c1',
        tool: { name: 'delete_repo', arguments: { repo: 'x' } },
        risk: { level: 'high' },
        timestamp: '2026-11-22T10:00:00Z',
        agentId: 'a1',
        providerId: 'p1',
        endUserId: 'u9',
        expiresAt: '2026-11-22T10:05:00Z',
      }),
    ).toEqual({
      id: 'c1',
      toolName: 'delete_repo',
      risk: 'high',
      arguments: { repo: 'x' },
      timestamp: '2026-11-22T10:00:00Z',
      status: 'pending',
      agentId: 'a1',
      providerId: 'p1',
      userId: null,
      endUserId: 'u9',
      expiresAt: '2026-11-22T10:05:00Z',
      reason: null,
      decidedBy: null,
    });
    expect(
      toConfirmation({
        id: 'c2',
        toolName: 'x',
        arguments: { a: 1 },
        status: 'rejected',
        reason: 'Request timed out.',
      }),
    ).toMatchObject({
      toolName: 'x',
      arguments: { a: 1 },
      status: 'rejected',
      reason: 'Request timed out.',
      risk: 'medium',
    });
  });

  it('rejects payloads without an id', () => {
    expect(toConfirmation({ tool: { name: 'x' } })).toBeNull();
    expect(toConfirmation('nope')).toBeNull();
  });
});

describe('openConfirmationStream', () => {
  it('reads events from a fetch stream sent with the session cookie and reports required and resolved confirmations', async () => {
    const body = [
      'event: connected\ndata: {"userId":"u1","timestamp":"t"}\n\n',
      'event: CONFIRMATION_REQUIRED\ndata: {"id":"c1","tool":{"name":"echo","arguments":{"a":1}},"risk":{"level":"low"},"timestamp":"t"}\n\n',
      'event: heartbeat\ndata: {}\n\nevent: CONFIRMATION_RESOLVED\ndata: {"id":"c1","confirmed":true,"timestamp":"t"}\n\n',
    ];
    let credentials: RequestCredentials | undefined;
    const fetch = async (_url: string, init?: RequestInit) => {
      credentials = init?.credentials;
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const part of body) controller.enqueue(new TextEncoder().encode(part));
        },
      });
      return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    const required: PendingConfirmation[] = [];
    const resolved: Array<[string, boolean]> = [];
    const statuses: StreamStatus['state'][] = [];
    let connected = 0;
    const stop = openConfirmationStream(createApiClient({ signedIn: () => true, fetch }), {
      onRequired: (c) => required.push(c),
      onResolved: (id, ok) => resolved.push([id, ok]),
      onStatus: (s) => statuses.push(s.state),
      onConnected: () => (connected += 1),
    });
    await expect.poll(() => resolved.length).toBe(1);
    stop();
    expect(credentials).toBe('same-origin');
    expect(connected).toBe(1);
    expect(required.map((c) => [c.id, c.toolName, c.risk, c.arguments])).toEqual([['c1', 'echo', 'low', { a: 1 }]]);
    expect(resolved).toEqual([['c1', true]]);
    expect(statuses.slice(0, 2)).toEqual(['connecting', 'live']);
  });
});
