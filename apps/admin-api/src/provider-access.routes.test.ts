import { testBackends } from '@agentgw/db/testing';
import type { TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAdminApiUnderTest, signedInUser, type Call, type Caller } from './admin-api.fixtures.js';

const BASE = '/api/v1/admin/provider-access';

describe.each(testBackends())('provider access API (%s)', (backend) => {
  let deps: TestDeps;
  let call: Call;
  let admin: Caller;
  let acmeAdmin: Caller;
  let globexAdmin: Caller;
  let creator: Caller;
  let endUser: Caller;
  let github: { id: string };
  let slack: { id: string };
  let agentId: string;
  const ruleEvents: unknown[] = [];

  const createAgent = async (caller: Caller, name: string): Promise<string> => {
    const res = await call('POST', '/api/v1/admin/agents', {
      token: caller.token,
      body: { name, upstreamUrl: 'https://agent.example.test' },
    });
    expect(res.status).toBe(201);
    return res.body.agent.id;
  };
  const createProvider = async (caller: Caller, name: string): Promise<{ id: string }> => {
    const res = await call('POST', '/api/v1/admin/tool-providers', {
      token: caller.token,
      body: { name, pattern: `${name}_*`, endpoint: 'https://mcp.example.test/mcp' },
    });
    expect(res.status).toBe(201);
    return res.body.provider;
  };
  const createRule = (caller: Caller, body: Record<string, unknown>) =>
    call('POST', BASE, { token: caller.token, body });

  beforeAll(async () => {
    ({ deps, call, admin, acmeAdmin, globexAdmin, acmeCreator: creator } = await startAdminApiUnderTest(backend));
    endUser = await signedInUser(deps, ['agent_creator'], 'acme');
    github = await createProvider(admin, 'github');
    slack = await createProvider(admin, 'slack');
    agentId = await createAgent(admin, 'assistant');
    await deps.bus.subscribe('rules.changed', (e) => void ruleEvents.push(e));
  });
  afterAll(() => deps?.close());

  describe('CRUD', () => {
    it('creates a rule with defaults and announces it', async () => {
      const res = await createRule(admin, {
        subjectType: 'agent',
        subjectId: agentId,
        providerId: github.id,
        action: 'allow',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        rule: {
          id: expect.any(String),
          subjectType: 'agent',
          subjectId: agentId,
          providerId: github.id,
          action: 'allow',
          toolPattern: '*',
          riskLevel: null,
          confirmationMode: null,
          confirmCarriers: null,
          description: null,
          tenantId: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
      });
      expect(ruleEvents).toContainEqual({ subjectType: 'agent', subjectId: agentId });
    });

    it('stores where its confirmations may be answered: the console always, the client only when listed; null is the default', async () => {
      const res = await createRule(admin, {
        subjectType: 'agent',
        subjectId: agentId,
        providerId: github.id,
        action: 'require_confirmation',
        toolPattern: 'github_delete_*',
        confirmCarriers: ['client', 'client'],
      });
      expect(res.status).toBe(201);
      expect(res.body.rule.confirmCarriers).toEqual(['console', 'client']);
      const id = res.body.rule.id;
      const patched = await call('PUT', `${BASE}/${id}`, { token: admin.token, body: { confirmCarriers: null } });
      expect(patched.status).toBe(200);
      expect(patched.body.rule.confirmCarriers).toBeNull();
      const bad = await createRule(admin, {
        subjectType: 'agent',
        subjectId: agentId,
        providerId: github.id,
        action: 'require_confirmation',
        confirmCarriers: ['email'],
      });
      expect(bad.status).toBe(400);
      expect((await call('DELETE', `${BASE}/${id}`, { token: admin.token })).status).toBe(200);
    });

    it('gets, updates and deletes a rule', async () => {
      const rule = (
        await createRule(admin, {
          subjectType: 'user',
          subjectId: endUser.id,
          providerId: '*',
          action: 'deny',
          toolPattern: 'x_*',
        })
      ).body.rule;
      const got = await call('GET', `${BASE}/${rule.id}`, { token: acmeAdmin.token });
      expect(got).toMatchObject({ status: 200, body: { rule } });

      const updated = await call('PUT', `${BASE}/${rule.id}`, {
        token: admin.token,
        body: {
          action: 'require_confirmation',
          riskLevel: 'critical',
          confirmationMode: 'always',
          description: 'careful',
        },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({
        success: true,
        rule: {
          ...rule,
          action: 'require_confirmation',
          riskLevel: 'critical',
          confirmationMode: 'always',
          description: 'careful',
          updatedAt: expect.any(String),
        },
      });

      ruleEvents.length = 0;
      expect(await call('DELETE', `${BASE}/${rule.id}`, { token: admin.token })).toMatchObject({
        status: 200,
        body: { success: true },
      });
      expect((await call('GET', `${BASE}/${rule.id}`, { token: admin.token })).status).toBe(404);
      expect(ruleEvents).toEqual([{ subjectType: 'user', subjectId: endUser.id }]);
    });

    it('lists with filters subjectType, subjectId, providerId and action', async () => {
      const listAgent = await createAgent(admin, 'lister');
      const a = (
        await createRule(admin, { subjectType: 'agent', subjectId: listAgent, providerId: github.id, action: 'allow' })
      ).body.rule;
      const b = (
        await createRule(admin, { subjectType: 'agent', subjectId: listAgent, providerId: slack.id, action: 'deny' })
      ).body.rule;
      const ids = async (query: string) =>
        (await call('GET', `${BASE}${query}`, { token: admin.token })).body.rules.map((r: { id: string }) => r.id);

      expect(await ids(`?subjectType=agent&subjectId=${listAgent}`)).toEqual([a.id, b.id]);
      expect(await ids(`?subjectId=${listAgent}&providerId=${slack.id}`)).toEqual([b.id]);
      expect(await ids(`?subjectId=${listAgent}&action=allow`)).toEqual([a.id]);
      expect(await ids(`?subjectType=user&subjectId=${listAgent}`)).toEqual([]);
      const bad = await call('GET', `${BASE}?action=maybe`, { token: admin.token });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'action' });
    });

    it('groups a provider’s rules by tool pattern, most specific first', async () => {
      const provider = await createProvider(admin, 'grouped');
      const r1 = (
        await createRule(admin, { subjectType: 'agent', subjectId: agentId, providerId: provider.id, action: 'allow' })
      ).body.rule;
      const r2 = (
        await createRule(admin, {
          subjectType: 'user',
          subjectId: endUser.id,
          providerId: provider.id,
          action: 'deny',
          toolPattern: 'grouped_delete_*',
        })
      ).body.rule;
      const r3 = (
        await createRule(admin, {
          subjectType: 'user',
          subjectId: creator.id,
          providerId: provider.id,
          action: 'allow',
          toolPattern: 'grouped_delete_*',
        })
      ).body.rule;
      const res = await call('GET', `${BASE}/by-provider/${provider.id}`, { token: acmeAdmin.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        providerId: provider.id,
        groups: [
          { toolPattern: 'grouped_delete_*', rules: [r2, r3] },
          { toolPattern: '*', rules: [r1] },
        ],
      });
      expect((await call('GET', `${BASE}/by-provider/unknown`, { token: admin.token })).status).toBe(404);
    });
  });

  describe('what an agent_creator reads', () => {
    it("sees only rules about itself and its own agents, never other owners' (list, get, by-provider)", async () => {
      const provider = await createProvider(admin, 'readable');
      const ownAgent = await createAgent(creator, 'mine');
      const forRule = (subjectType: string, subjectId: string) => ({
        subjectType,
        subjectId,
        providerId: provider.id,
        action: 'allow',
      });
      const mine = [
        (await createRule(admin, forRule('agent', ownAgent))).body.rule,
        (await createRule(admin, { ...forRule('user', creator.id), tenantId: 'acme' })).body.rule,
      ];
      const others = [
        (await createRule(admin, forRule('agent', agentId))).body.rule,
        (await createRule(admin, { ...forRule('user', endUser.id), tenantId: 'acme' })).body.rule,
      ];
      const ids = (rules: { id: string }[]) => rules.map((r) => r.id).sort();
      const listed = async (caller: Caller, query = `?providerId=${provider.id}`) =>
        ids((await call('GET', `${BASE}${query}`, { token: caller.token })).body.rules);

      expect(await listed(creator), 'agent_creator lists only its own rules').toEqual(ids(mine));
      expect(await listed(creator, `?subjectType=agent&subjectId=${agentId}`)).toEqual([]);
      expect(await listed(acmeAdmin), 'tenant_admin still lists every rule of its view').toEqual(
        ids([...mine, ...others]),
      );
      expect(await listed(endUser), 'another agent_creator sees its own user rule only').toEqual(ids([others[1]]));
      for (const rule of others)
        expect((await call('GET', `${BASE}/${rule.id}`, { token: creator.token })).status).toBe(404);
      for (const rule of mine)
        expect((await call('GET', `${BASE}/${rule.id}`, { token: creator.token })).body).toEqual({ rule });
      const grouped = await call('GET', `${BASE}/by-provider/${provider.id}`, { token: creator.token });
      expect(ids(grouped.body.groups.flatMap((g: { rules: { id: string }[] }) => g.rules))).toEqual(ids(mine));
    });
  });

  describe('validation', () => {
    it('answers 400 naming the field', async () => {
      const malformed = await call('POST', BASE, { token: admin.token, rawBody: '{"subjectType":' });
      expect(malformed.status).toBe(400);

      const valid = { subjectType: 'agent', subjectId: agentId, providerId: github.id, action: 'allow' };
      const cases: [Record<string, unknown>, string][] = [
        [{ ...valid, subjectType: 'group' }, 'subjectType'],
        [{ ...valid, subjectId: undefined }, 'subjectId'],
        [{ ...valid, subjectId: 42 }, 'subjectId'],
        [{ ...valid, action: 'maybe' }, 'action'],
        [{ ...valid, riskLevel: 'extreme' }, 'riskLevel'],
        [{ ...valid, confirmationMode: 'sometimes' }, 'confirmationMode'],
        [{ ...valid, providerId: 'no-such-provider' }, 'providerId'],
        [{ ...valid, subjectId: 'no-such-agent' }, 'subjectId'],
      ];
      for (const [body, field] of cases) {
        const res = await createRule(admin, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
      }
    });

    it('answers 404 for unknown rule ids', async () => {
      for (const [method, body] of [['GET'], ['PUT', { action: 'deny' }], ['DELETE']] as const) {
        const res = await call(method, `${BASE}/nope`, { token: admin.token, body });
        expect(res.status, method).toBe(404);
      }
    });
  });

  describe('permissions and tenancy', () => {
    it('needs provider:read to read and provider:update to write, evaluate and manage agent rules', async () => {
      expect((await call('GET', BASE)).status).toBe(401);
      expect((await call('GET', BASE, { token: creator.token })).status).toBe(200);
      const body = { subjectType: 'user', subjectId: endUser.id, providerId: '*', action: 'allow' };
      expect((await createRule(creator, body)).status).toBe(403);
      expect(
        (
          await call('POST', `${BASE}/evaluate`, {
            token: creator.token,
            body: { providerId: github.id, toolName: 't' },
          })
        ).status,
      ).toBe(403);
      expect((await call('GET', `${BASE}/agent/${agentId}`, { token: creator.token })).status).toBe(403);
    });

    it('keeps tenants apart', async () => {
      const acmeAgent = await createAgent(acmeAdmin, 'acme-bot');
      const acmeRule = await createRule(acmeAdmin, {
        subjectType: 'agent',
        subjectId: acmeAgent,
        providerId: github.id,
        action: 'allow',
      });
      expect(acmeRule.status).toBe(201);
      expect(acmeRule.body.rule.tenantId).toBe('acme');

      expect((await call('GET', `${BASE}/${acmeRule.body.rule.id}`, { token: globexAdmin.token })).status).toBe(404);
      const globexList = await call('GET', BASE, { token: globexAdmin.token });
      expect(globexList.body.rules.map((r: { id: string }) => r.id)).not.toContain(acmeRule.body.rule.id);
      expect((await call('GET', `${BASE}/agent/${acmeAgent}`, { token: globexAdmin.token })).status).toBe(404);

      // Another tenant's agent or user cannot be a subject; a global agent is admin-only.
      expect(
        await createRule(globexAdmin, { subjectType: 'agent', subjectId: acmeAgent, providerId: '*', action: 'allow' }),
      ).toMatchObject({
        status: 400,
        body: { field: 'subjectId' },
      });
      expect(
        await createRule(globexAdmin, { subjectType: 'user', subjectId: endUser.id, providerId: '*', action: 'allow' }),
      ).toMatchObject({
        status: 400,
        body: { field: 'subjectId' },
      });
      expect(
        (await createRule(acmeAdmin, { subjectType: 'agent', subjectId: agentId, providerId: '*', action: 'allow' }))
          .status,
      ).toBe(403);
      expect(
        (
          await createRule(acmeAdmin, {
            subjectType: 'user',
            subjectId: endUser.id,
            providerId: '*',
            action: 'allow',
            tenantId: 'globex',
          })
        ).status,
      ).toBe(403);
      // A provider of another tenant is as unknown as a missing one.
      const globexProvider = await createProvider(globexAdmin, 'globex_only');
      expect(
        await createRule(acmeAdmin, {
          subjectType: 'agent',
          subjectId: acmeAgent,
          providerId: globexProvider.id,
          action: 'allow',
        }),
      ).toMatchObject({
        status: 400,
        body: { field: 'providerId' },
      });
    });
  });

  describe('agent rules', () => {
    let agent: string;
    beforeEach(async () => {
      agent = await createAgent(admin, 'replaceable');
    });

    it('replaces all of an agent’s rules atomically, in the submitted order', async () => {
      await createRule(admin, { subjectType: 'agent', subjectId: agent, providerId: slack.id, action: 'allow' });
      ruleEvents.length = 0;
      const res = await call('PUT', `${BASE}/agent/${agent}`, {
        token: admin.token,
        body: {
          rules: [
            { providerId: github.id, action: 'allow', toolPattern: 'github_get_*', riskLevel: 'low' },
            { providerId: '*', action: 'deny' },
          ],
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.rules).toMatchObject([
        {
          subjectType: 'agent',
          subjectId: agent,
          providerId: github.id,
          action: 'allow',
          toolPattern: 'github_get_*',
          riskLevel: 'low',
        },
        { subjectType: 'agent', subjectId: agent, providerId: '*', action: 'deny', toolPattern: '*', riskLevel: null },
      ]);
      const listed = await call('GET', `${BASE}/agent/${agent}`, { token: admin.token });
      expect(listed.body.rules).toEqual(res.body.rules);
      expect(ruleEvents).toEqual([{ subjectType: 'agent', subjectId: agent }]);

      const emptied = await call('PUT', `${BASE}/agent/${agent}`, { token: admin.token, body: { rules: [] } });
      expect(emptied.body).toEqual({ success: true, rules: [] });
    });

    it('leaves the old set untouched when one rule is invalid', async () => {
      const before = (
        await call('PUT', `${BASE}/agent/${agent}`, {
          token: admin.token,
          body: { rules: [{ providerId: github.id, action: 'allow' }] },
        })
      ).body.rules;
      const unknownProvider = await call('PUT', `${BASE}/agent/${agent}`, {
        token: admin.token,
        body: {
          rules: [
            { providerId: slack.id, action: 'allow' },
            { providerId: 'missing', action: 'allow' },
          ],
        },
      });
      expect(unknownProvider.status).toBe(400);
      expect(unknownProvider.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'rules.1.providerId' });
      const badAction = await call('PUT', `${BASE}/agent/${agent}`, {
        token: admin.token,
        body: {
          rules: [
            { providerId: slack.id, action: 'allow' },
            { providerId: slack.id, action: 'perhaps' },
          ],
        },
      });
      expect(badAction.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'rules.1.action' });
      expect((await call('GET', `${BASE}/agent/${agent}`, { token: admin.token })).body.rules).toEqual(before);
    });

    it('answers 404 for an unknown agent and 400 for a missing rules array', async () => {
      expect((await call('GET', `${BASE}/agent/nope`, { token: admin.token })).status).toBe(404);
      expect((await call('PUT', `${BASE}/agent/nope`, { token: admin.token, body: { rules: [] } })).status).toBe(404);
      expect(await call('PUT', `${BASE}/agent/${agent}`, { token: admin.token, body: {} })).toMatchObject({
        status: 400,
        body: { field: 'rules' },
      });
    });
  });

  describe('evaluate', () => {
    let bot: string;
    let user: Caller;
    const evaluate = (body: Record<string, unknown>) => call('POST', `${BASE}/evaluate`, { token: admin.token, body });

    beforeAll(async () => {
      bot = await createAgent(admin, 'evaluated');
      user = await signedInUser(deps, ['agent_creator']);
    });

    it('follows the evaluation order over stored rules', async () => {
      const input = { userId: user.id, agentId: bot, providerId: github.id, toolName: 'github_delete_repo' };
      expect(await evaluate(input)).toMatchObject({
        status: 200,
        body: { action: 'deny', risk: 'high', matchedRule: null },
      });

      const wildcardAllow = (
        await createRule(admin, { subjectType: 'agent', subjectId: bot, providerId: '*', action: 'allow' })
      ).body.rule;
      expect((await evaluate(input)).body).toEqual({ action: 'allow', risk: 'low', matchedRule: wildcardAllow });

      const agentConfirm = (
        await createRule(admin, {
          subjectType: 'agent',
          subjectId: bot,
          providerId: github.id,
          action: 'require_confirmation',
          toolPattern: 'github_delete_*',
          riskLevel: 'critical',
        })
      ).body.rule;
      expect((await evaluate(input)).body).toEqual({
        action: 'require_confirmation',
        risk: 'critical',
        matchedRule: agentConfirm,
      });

      const userDeny = (
        await createRule(admin, {
          subjectType: 'user',
          subjectId: user.id,
          providerId: github.id,
          action: 'deny',
          toolPattern: 'github_delete_*',
        })
      ).body.rule;
      expect((await evaluate(input)).body).toMatchObject({
        action: 'deny',
        risk: 'high',
        matchedRule: { id: userDeny.id },
      });

      // Other tools and providers are not touched by the narrower rules.
      expect((await evaluate({ ...input, toolName: 'github_list' })).body).toMatchObject({
        action: 'allow',
        matchedRule: { id: wildcardAllow.id },
      });
      expect((await evaluate({ ...input, providerId: slack.id })).body).toMatchObject({
        action: 'allow',
        matchedRule: { id: wildcardAllow.id },
      });
      // Without the agent, only the user's rules count.
      expect((await evaluate({ userId: user.id, providerId: slack.id, toolName: 'x' })).body).toMatchObject({
        action: 'deny',
        matchedRule: null,
      });
    });

    it('answers 400 naming the missing field', async () => {
      expect(await evaluate({ userId: user.id, agentId: bot, providerId: github.id })).toMatchObject({
        status: 400,
        body: { field: 'toolName' },
      });
      expect(await evaluate({ userId: 1, providerId: github.id, toolName: 't' })).toMatchObject({
        status: 400,
        body: { field: 'userId' },
      });
    });
  });
});
