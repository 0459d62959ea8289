import { newId } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { PROTECTED_PROMPT, PROTECTED_RESOURCE_URI, SseEventReader } from '@agentgw/testkit';
import { describe, expect, it } from 'vitest';
import { asUserGateway, connectUrl, type Json } from './as-user.fixtures.js';

const SERVICE = 'acme_docs';
const CONNECT_URL = connectUrl(SERVICE);
/** The 2026-07-28 wire, on which subscriptions/listen exists, and its `_meta` keys. */
const MODERN = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

// Issue 22: every method the gateway forwards to a provider called as the user goes as that user.
// The upstream is protected per the MCP authorization spec (every request needs the user's token),
// so prompts/get, resources/read, completion/complete and the proxy's pass-through reach it only
// with the caller's own token; a user who has not connected is refused with the connect URL, and
// the upstream's own log shows no request without a valid user token.
describe.each(testBackends())(
  'methods forwarded as the user to a protected MCP upstream (all-in-one, %s)',
  (backend) => {
    const gateway = asUserGateway({ backend, credentialProvider: { serviceType: SERVICE, name: 'Acme docs' } });
    const { api, unified, proxied, user, connect, legacy, openSession } = gateway;
    const greeting = { name: PROTECTED_PROMPT, arguments: { name: 'bob' } };
    const completion = { ref: { type: 'ref/prompt', name: PROTECTED_PROMPT }, argument: { name: 'name', value: 'al' } };
    /** The subjects of the upstream's requests that carried `method`. */
    const subjectsOf = (method: string) =>
      gateway.upstream.requests.filter((r) => r.methods.includes(method)).map((r) => r.subject);

    it('sends prompts/get, resources/read and completion/complete to the upstream as the caller, on both endpoints', async () => {
      const [alice, bob] = [await user(), await user()];
      await connect(alice, 'alice');
      await connect(bob, 'bob');

      const prompt = await unified(alice, 'prompts/get', greeting);
      expect(prompt.status, JSON.stringify(prompt.body)).toBe(200);
      expect(prompt.body.result.messages[0].content.text).toBe('alice greets bob');
      const read = await unified(alice, 'resources/read', { uri: PROTECTED_RESOURCE_URI });
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      expect(read.body.result.contents[0].text).toBe('you are alice');
      const completed = await unified(alice, 'completion/complete', completion);
      expect(completed.status, JSON.stringify(completed.body)).toBe(200);
      expect(completed.body.result.completion.values).toEqual(['alice', 'albert']);

      // The proxy passes them on as the caller too; each user is answered as themselves.
      expect((await proxied(bob, 'prompts/get', greeting)).body.result.messages[0].content.text).toBe('bob greets bob');
      expect((await proxied(bob, 'resources/read', { uri: PROTECTED_RESOURCE_URI })).body.result.contents[0].text).toBe(
        'you are bob',
      );
      expect((await proxied(alice, 'completion/complete', completion)).body.result.completion.values).toEqual([
        'alice',
        'albert',
      ]);
      expect((await unified(bob, 'resources/read', { uri: PROTECTED_RESOURCE_URI })).body.result.contents[0].text).toBe(
        'you are bob',
      );

      // The log-level fan-out and the proxy's pass-through of any other method go as the caller too (this upstream refuses both: no logging, no subscriptions).
      expect((await unified(alice, 'logging/setLevel', { level: 'info' })).status).toBe(200);
      expect((await proxied(bob, 'resources/subscribe', { uri: PROTECTED_RESOURCE_URI })).body.error).toBeDefined();

      // The upstream's own log: each method reached it as the user who sent it, never without a token.
      expect(subjectsOf('prompts/get')).toEqual(['alice', 'bob']);
      expect(subjectsOf('resources/read')).toEqual(['alice', 'bob', 'bob']);
      expect(subjectsOf('completion/complete')).toEqual(['alice', 'alice']);
      expect(subjectsOf('logging/setLevel')).toEqual(['alice']);
      expect(subjectsOf('resources/subscribe')).toEqual(['bob']);
      expect(gateway.upstream.requests.filter((r) => r.subject === null)).toEqual([]);
      expect(gateway.upstream.refused).toBe(0);
    });

    it("opens a client session's upstream session as that user, answers in it and follows its server stream as them", async () => {
      const dave = await user();
      await connect(dave, 'dave');
      const before = gateway.upstream.requests.length;
      const session = await openSession(dave);
      for (const id of [2, 3]) {
        const res = await legacy(
          dave,
          'POST',
          { jsonrpc: '2.0', id, method: 'prompts/get', params: greeting },
          session,
        );
        expect(((await res.json()) as Json).result.messages[0].content.text).toBe('dave greets bob');
      }
      // The session's server stream (GET): the gateway follows the upstream session's own stream as dave.
      const stream = new AbortController();
      const get = await gateway.host.app.request('/api/v1/mcp/mcp', {
        method: 'GET',
        signal: stream.signal,
        headers: {
          authorization: `Bearer ${dave}`,
          accept: 'text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'mcp-session-id': session,
        },
      });
      expect(get.status).toBe(200);
      await expect
        .poll(
          () => gateway.upstream.requests.slice(before).some((r) => r.httpMethod === 'GET' && r.subject === 'dave'),
          { timeout: 10_000 },
        )
        .toBe(true);
      stream.abort();
      await get.body?.cancel().catch(() => undefined);
      const seen = gateway.upstream.requests.slice(before);
      expect(seen.some((r) => r.methods.includes('initialize'))).toBe(true);
      expect(new Set(seen.map((r) => r.subject))).toEqual(new Set(['dave']));
    });

    it("ends a client session's upstream session as its user (DELETE), and sends nothing for a user whose connection was removed", async () => {
      const [gina, henry] = [await user(), await user()];
      await connect(gina, 'gina');
      await connect(henry, 'henry');
      const prompted = async (token: string, session: string, who: string) => {
        const res = await legacy(
          token,
          'POST',
          { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: greeting },
          session,
        );
        expect(((await res.json()) as Json).result.messages[0].content.text).toBe(`${who} greets bob`);
      };
      const [ginas, henrys] = [await openSession(gina), await openSession(henry)];
      await prompted(gina, ginas, 'gina');
      await prompted(henry, henrys, 'henry');

      // The client's DELETE ends the upstream session opened for it, sent as gina (her own token), before its 204.
      const before = gateway.upstream.requests.length;
      expect((await legacy(gina, 'DELETE', undefined, ginas)).status).toBe(204);
      expect(gateway.upstream.requests.slice(before)).toEqual([{ httpMethod: 'DELETE', methods: [], subject: 'gina' }]);

      // Henry removes his connection: his session still ends (204), and his upstream session is left to expire rather than ended without his token.
      const stored = (await api('GET', '/api/v1/credentials', henry)).body as {
        credentials: { id: string; serviceType: string }[];
      };
      const credential = stored.credentials.find((c) => c.serviceType === SERVICE);
      expect((await api('DELETE', `/api/v1/credentials/${credential?.id ?? ''}`, henry)).status).toBe(200);
      const quiet = gateway.upstream.requests.length;
      expect((await legacy(henry, 'DELETE', undefined, henrys)).status).toBe(204);
      expect(gateway.upstream.requests.slice(quiet)).toEqual([]);
      expect((await legacy(henry, 'POST', { jsonrpc: '2.0', id: 3, method: 'ping' }, henrys)).status).toBe(404);
    });

    it('refuses a user who has not connected with the connect URL, and sends the upstream nothing for them', async () => {
      const carol = await user();
      const before = gateway.upstream.requests.length;
      for (const [endpoint, method, params] of [
        ['unified', 'prompts/get', greeting],
        ['unified', 'resources/read', { uri: PROTECTED_RESOURCE_URI }],
        ['unified', 'completion/complete', completion],
        ['proxy', 'prompts/get', greeting],
        ['proxy', 'resources/read', { uri: PROTECTED_RESOURCE_URI }],
        ['proxy', 'completion/complete', completion],
        ['proxy', 'resources/subscribe', { uri: PROTECTED_RESOURCE_URI }],
      ] as const) {
        const res = await (endpoint === 'unified' ? unified : proxied)(carol, method, params);
        expect(res.status, `${endpoint} ${method}: ${JSON.stringify(res.body)}`).toBe(403);
        expect(res.body.error).toMatchObject({
          code: -32003,
          data: {
            code: 'CREDENTIALS_REQUIRED',
            missing: [SERVICE],
            authUrl: CONNECT_URL,
            providerId: gateway.providerId,
          },
        });
      }
      // logging/setLevel goes to every provider the caller reaches: this one is skipped for her, not called without her token.
      expect((await unified(carol, 'logging/setLevel', { level: 'info' })).status).toBe(200);
      expect(gateway.upstream.requests.slice(before)).toEqual([]);

      // Once she connects, the same requests go as her.
      await connect(carol, 'carol');
      expect((await unified(carol, 'prompts/get', greeting)).body.result.messages[0].content.text).toBe(
        'carol greets bob',
      );
      expect(
        (await proxied(carol, 'resources/read', { uri: PROTECTED_RESOURCE_URI })).body.result.contents[0].text,
      ).toBe('you are carol');
      expect(gateway.upstream.requests.slice(before).map((r) => r.subject)).not.toContain(null);
      expect(new Set(gateway.upstream.requests.slice(before).map((r) => r.subject))).toEqual(new Set(['carol']));
    });

    it('listens (subscriptions/listen, 2026-07-28) on the upstream as the caller, and not at all for a user who has not connected', async () => {
      const [erin, frank] = [await user(), await user()];
      await connect(erin, 'erin');
      const listen = async (token: string, signal: AbortSignal) => {
        const res = await gateway.host.app.request(`/api/v1/mcp-proxy/${gateway.providerId}/mcp`, {
          method: 'POST',
          signal,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': MODERN,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 'sub-1',
            method: 'subscriptions/listen',
            params: {
              notifications: { resourceSubscriptions: [PROTECTED_RESOURCE_URI] },
              _meta: { [META_VERSION]: MODERN, [META_CAPABILITIES]: {} },
            },
          }),
        });
        const reader = new SseEventReader(res);
        expect((await reader.next())?.data).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
        return reader;
      };
      const before = gateway.upstream.requests.length;
      const asErin = new AbortController();
      const erinReader = await listen(erin, asErin.signal);
      // The upstream is a session server: the listen opens a session of its own as erin and subscribes there.
      await expect
        .poll(() => subjectsOf('resources/subscribe').filter((s) => s === 'erin').length, { timeout: 10_000 })
        .toBeGreaterThan(0);
      asErin.abort();
      await erinReader.close();
      expect(new Set(gateway.upstream.requests.slice(before).map((r) => r.subject))).toEqual(new Set(['erin']));

      const quiet = gateway.upstream.requests.length;
      const asFrank = new AbortController();
      const frankReader = await listen(frank, asFrank.signal);
      await new Promise((resolve) => setTimeout(resolve, 500));
      asFrank.abort();
      await frankReader.close();
      expect(gateway.upstream.requests.slice(quiet).filter((r) => r.subject !== 'erin')).toEqual([]);
    });

    it('names the provider as listed per user in the tool-collisions report, without asking its upstream with no user token', async () => {
      const before = gateway.upstream.requests.length;
      const report = await api('GET', '/api/v1/mcp/tool-collisions', gateway.adminToken);
      expect(report.status, JSON.stringify(report.body)).toBe(200);
      expect(report.body).toEqual({
        data: [],
        listedPerUser: [{ providerId: gateway.providerId, providerName: 'acme' }],
      });
      expect(gateway.upstream.requests.slice(before)).toEqual([]);
    });

    it('refuses a caller acting for no user (a runtime agent alone) rather than calling the upstream without a user token', async () => {
      const before = gateway.upstream.requests.length;
      const created = await api('POST', '/api/v1/admin/agents', gateway.adminToken, {
        name: `bot-${newId().slice(0, 8)}`,
        upstreamUrl: gateway.upstream.url,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const { agent, runtime_token: runtime } = created.body as { agent: { id: string }; runtime_token: string };
      const rule = await api('POST', '/api/v1/admin/provider-access', gateway.adminToken, {
        subjectType: 'agent',
        subjectId: agent.id,
        providerId: gateway.providerId,
        action: 'allow',
        toolPattern: '*',
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(201);
      const res = await proxied(runtime, 'prompts/get', greeting);
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.error.data).toMatchObject({ code: 'USER_REQUIRED', providerId: gateway.providerId });
      expect(gateway.upstream.requests.slice(before)).toEqual([]);
    });
  },
);
