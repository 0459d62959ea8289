import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { McpUpstreamClient } from './upstream-client.js';

// A caller without a session of its own (a stateless client of the gateway) runs on a shared
// upstream session. It used to be one per provider, opened with the first caller's identity.

let upstream: McpFixture;
let client: McpUpstreamClient;

beforeEach(async () => {
  upstream = await startMcpServer({
    name: 'sessions',
    tools: [{ name: 'whoami', handler: (_a, call) => String(call.headers['x-user-id']) }],
  });
});
afterEach(async () => {
  await client?.destroy();
  await upstream.close();
});

const targetFor = (user: string) => ({
  endpoint: upstream.url,
  key: 'provider-1',
  principal: user,
  headers: { 'x-user-id': user },
});
const call = (user: string) => client.request(targetFor(user), 'tools/call', { name: 'whoami', arguments: {} });

/** Upstream session id → the x-user-id of every request made on it (initialize included, by the id it was answered with). */
function usersBySession(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of upstream.requests) {
    const sid = r.headers['mcp-session-id'];
    if (typeof sid !== 'string') continue;
    if (!out.has(sid)) out.set(sid, new Set());
    out.get(sid)!.add(String(r.headers['x-user-id']));
  }
  return out;
}
const initializes = (user?: string) =>
  upstream.requests.filter(
    (r) =>
      (r.body as { method?: string })?.method === 'initialize' &&
      (user === undefined || r.headers['x-user-id'] === user),
  ).length;

describe('shared upstream sessions', () => {
  it('keeps one per principal: never a session carrying two principals, each opened with its own identity', async () => {
    client = new McpUpstreamClient();
    const [a1, b1] = await Promise.all([call('alice'), call('bob')]);
    const [a2, b2] = await Promise.all([call('alice'), call('bob')]);
    expect(a1.session.sessionId).toBe(a2.session.sessionId);
    expect(b1.session.sessionId).toBe(b2.session.sessionId);
    expect(a1.session.sessionId).not.toBe(b1.session.sessionId);
    expect(initializes('alice')).toBe(1);
    expect(initializes('bob')).toBe(1);
    const sessions = usersBySession();
    expect(sessions.get(a1.session.sessionId!)).toEqual(new Set(['alice']));
    expect(sessions.get(b1.session.sessionId!)).toEqual(new Set(['bob']));
    expect((a2.response as unknown as { result: { content: { text: string }[] } }).result.content[0]!.text).toBe(
      'alice',
    );
  });

  it('keeps at most maxSharedSessions: the least recently used is dropped and ended upstream (DELETE)', async () => {
    client = new McpUpstreamClient({ maxSharedSessions: 2 });
    const alice = (await call('alice')).session.sessionId!;
    await call('bob');
    await call('alice'); // alice is now the most recently used: bob goes first
    const bob = usersBySession();
    const bobSession = [...bob].find(([, users]) => users.has('bob'))![0];
    await call('carol');
    await vi.waitFor(() =>
      expect(upstream.requests.some((r) => r.method === 'DELETE' && r.headers['mcp-session-id'] === bobSession)).toBe(
        true,
      ),
    );
    expect(upstream.requests.some((r) => r.method === 'DELETE' && r.headers['mcp-session-id'] === alice)).toBe(false);
    // The DELETE carried bob's own headers, and bob's next call opens a fresh session.
    expect(upstream.requests.find((r) => r.method === 'DELETE')!.headers['x-user-id']).toBe('bob');
    const again = await call('bob');
    expect(again.session.sessionId).not.toBe(bobSession);
    expect(initializes('bob')).toBe(2);
    expect(initializes('alice')).toBe(1);
  });

  it('without a principal, callers of a target still share one session (tool listings)', async () => {
    client = new McpUpstreamClient();
    const anonymous = { endpoint: upstream.url, key: 'provider-1' };
    const [x, y] = await Promise.all([
      client.request(anonymous, 'tools/list', {}),
      client.request(anonymous, 'tools/list', {}),
    ]);
    expect(x.session.sessionId).toBe(y.session.sessionId);
    expect(initializes()).toBe(1);
  });
});
