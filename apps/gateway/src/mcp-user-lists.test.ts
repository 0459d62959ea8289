import { testBackends } from '@agentgw/db/testing';
import { describe, expect, it } from 'vitest';
import { asUserGateway, connectUrl, type Json } from './as-user.fixtures.js';

const SERVICE = 'acme_tools';
const CONNECT_URL = connectUrl(SERVICE);
/** Each account sees its own tools beside whoami at the upstream. */
const TOOLS_OF: Record<string, string[]> = {
  alice: ['alice_notes'],
  bob: ['bob_calendar', 'bob_mail'],
  carol: ['carol_files'],
};

// Issue 22: the tool lists of an upstream protected per the MCP authorization spec (every request,
// initialize and tools/list too, needs the user's token; each user may see other tools). The
// gateway lists it as each user, so two users get their own lists through both endpoints; one
// who has not connected sees it named as left out with the connect URL, and after connecting, the tools.
describe.each(testBackends())('per-user tool lists of a protected MCP upstream (all-in-one, %s)', (backend) => {
  const gateway = asUserGateway({
    backend,
    toolsOf: (subject) => TOOLS_OF[subject] ?? [],
    credentialProvider: { serviceType: SERVICE, name: 'Acme tools' },
  });
  const { unified, proxied, user, connect, waitForAudit } = gateway;
  const names = (res: { body: Json }) => (res.body.result.tools as Json[]).map((tool) => tool.name as string).sort();

  it('refuses every tokenless request, initialize and tools/list included (the fixture is protected as the spec has it)', async () => {
    for (const method of ['initialize', 'tools/list']) {
      const res = await fetch(gateway.upstream.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method,
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      });
      expect(res.status, method).toBe(401);
      await res.body?.cancel();
    }
  });

  it("lists each user's own tools through the unified endpoint and the proxy, and calls them as that user", async () => {
    const [alice, bob] = [await user(), await user()];
    await connect(alice, 'alice');
    await connect(bob, 'bob');

    const a = await unified(alice, 'tools/list');
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(names(a)).toEqual(['alice_notes', 'whoami']);
    expect(a.body.result._meta).toBeUndefined();
    expect(names(await unified(bob, 'tools/list'))).toEqual(['bob_calendar', 'bob_mail', 'whoami']);
    expect(names(await proxied(alice, 'tools/list'))).toEqual(['alice_notes', 'whoami']);
    expect(names(await proxied(bob, 'tools/list'))).toEqual(['bob_calendar', 'bob_mail', 'whoami']);

    const notes = await unified(alice, 'tools/call', { name: 'alice_notes', arguments: {} });
    expect(notes.status, JSON.stringify(notes.body)).toBe(200);
    expect(notes.body.result.content[0].text).toBe('alice_notes for alice');
    expect((await proxied(bob, 'tools/call', { name: 'bob_mail', arguments: {} })).body.result.content[0].text).toBe(
      'bob_mail for bob',
    );
    // A tool only another user's list has is not theirs to call: unknown, never sent upstream.
    const foreign = await unified(bob, 'tools/call', { name: 'alice_notes', arguments: {} });
    expect(foreign.body.error).toMatchObject({ code: -32602, message: 'Unknown tool: alice_notes' });
    expect((await proxied(bob, 'tools/call', { name: 'alice_notes', arguments: {} })).body.error).toMatchObject({
      code: -32602,
    });
    expect(gateway.upstream.identities).toEqual(['alice', 'bob']);
  });

  it('names the provider left out with the connect URL for a user who has not connected, refuses their calls with it, and lists the tools once they connect', async () => {
    const carol = await user();
    const before = gateway.upstream.identities.length;

    const listed = await unified(carol, 'tools/list');
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.result.tools).toEqual([]);
    expect(listed.body.result._meta['agentgw/leftOut']).toEqual([
      {
        providerId: gateway.providerId,
        name: 'acme',
        reason: expect.stringContaining(`Connect ${SERVICE} first`),
        authUrl: CONNECT_URL,
      },
    ]);
    const viaProxy = await proxied(carol, 'tools/list');
    expect(viaProxy.status).toBe(200);
    expect(viaProxy.body.result).toMatchObject({
      tools: [],
      _meta: { 'agentgw/leftOut': [{ providerId: gateway.providerId, authUrl: CONNECT_URL }] },
    });

    // Any name the provider's pattern claims: the same refusal a call answers, never 502, audited as refused.
    for (const [name, call] of [
      ['whoami', unified],
      ['carol_files', unified],
      ['whoami', proxied],
    ] as const) {
      const res = await call(carol, 'tools/call', { name, arguments: {} });
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(403);
      expect(res.body.error).toMatchObject({
        code: -32003,
        data: {
          code: 'CREDENTIALS_REQUIRED',
          missing: [SERVICE],
          authUrl: CONNECT_URL,
          providerId: gateway.providerId,
        },
      });
      expect(await waitForAudit(res.body.error.data.auditId as string)).toMatchObject({
        status: 'rejected',
        tool_name: name,
        error: expect.stringContaining(`Connect ${SERVICE} first`),
      });
    }
    expect(gateway.upstream.identities).toHaveLength(before);

    // Connecting publishes credential.changed: the next list is asked for with the new token at once.
    await connect(carol, 'carol');
    expect(names(await unified(carol, 'tools/list'))).toEqual(['carol_files', 'whoami']);
    expect(names(await proxied(carol, 'tools/list'))).toEqual(['carol_files', 'whoami']);
    expect(
      (await unified(carol, 'tools/call', { name: 'carol_files', arguments: {} })).body.result.content[0].text,
    ).toBe('carol_files for carol');
  });

  it('asks a client that declared URL-mode elicitation to open the connect URL when it calls before connecting', async () => {
    const dave = await user();
    const session = await gateway.openSession(dave, { elicitation: { url: {} } });
    const res = await gateway.legacy(
      dave,
      'POST',
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      session,
    );
    expect(((await res.json()) as Json).error).toMatchObject({
      code: -32042,
      data: { elicitations: [{ mode: 'url', url: CONNECT_URL }], code: 'CREDENTIALS_REQUIRED' },
    });
  });
});
