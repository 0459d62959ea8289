import { secretBoxFor, hashToken } from '@agentgw/auth';
import { newId, type GatewayEvents } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import type { TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAdminApiUnderTest, signedInUser, type Call, type Caller } from './admin-api.fixtures.js';

const base = '/api/v1/admin/agents';

describe.each(testBackends())('agents API (%s)', (backend) => {
  let deps: TestDeps;
  let call: Call;
  let admin: Caller;
  let creator: Caller;
  let otherCreator: Caller;
  let tenantAdmin: Caller;
  const events: { name: string; payload: unknown }[] = [];

  beforeAll(async () => {
    ({ deps, call, admin, acmeCreator: creator, acmeAdmin: tenantAdmin } = await startAdminApiUnderTest(backend));
    otherCreator = await signedInUser(deps, ['agent_creator'], 'acme');
    for (const name of ['agent.changed', 'rules.changed'] as const) {
      await deps.bus.subscribe(name, (payload) => void events.push({ name, payload }));
    }
  });
  afterAll(() => deps?.close());
  beforeEach(() => {
    events.length = 0;
  });

  const createAgent = async (caller: Caller, body: Record<string, unknown> = {}) => {
    const res = await call('POST', base, {
      token: caller.token,
      body: { name: 'Helper', upstreamUrl: 'https://runtime.example.test/agent', ...body },
    });
    expect(res.status).toBe(201);
    return res.body as { agent: { id: string }; runtime_token: string };
  };
  const runtimeAuth = (token: string) =>
    deps.auth.authenticate(new Headers({ authorization: `Bearer ${token}` }), 'flexible');

  it('creates an agent: exact response, token stored hashed, secret sealed to the agent', async () => {
    const res = await call('POST', base, {
      token: creator.token,
      body: {
        name: 'Mail bot',
        upstreamUrl: 'https://runtime.example.test/mail',
        upstreamSecret: 'upstream-s3cret',
        description: 'Reads mail',
        requireConfirmation: true,
        requiredCredentials: [{ serviceType: 'gmail', description: 'Google mail' }],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      agent: {
        id: expect.any(String),
        name: 'Mail bot',
        upstreamUrl: 'https://runtime.example.test/mail',
        hasUpstreamSecret: true,
        isActive: true,
        requireConfirmation: true,
        requiredCredentials: [{ serviceType: 'gmail', description: 'Google mail' }],
        runtimeTokenPrefix: expect.any(String),
        createdAt: expect.any(String),
      },
      runtime_token: expect.stringMatching(/^art_[A-Za-z0-9_-]{43}$/),
    });
    const { agent, runtime_token: token } = res.body;
    expect(token.startsWith(agent.runtimeTokenPrefix)).toBe(true);
    expect(JSON.stringify(res.body)).not.toContain('upstream-s3cret');

    const row = await deps.db.selectFrom('agents').selectAll().where('id', '=', agent.id).executeTakeFirstOrThrow();
    expect(row.runtime_token_hash).toBe(hashToken(token));
    expect(row.upstream_secret_enc).not.toContain('upstream-s3cret');
    const box = secretBoxFor(deps.config);
    expect(box.open(row.upstream_secret_enc!, agent.id)).toBe('upstream-s3cret');
    expect(box.open(row.upstream_secret_enc!, 'another-agent')).toBeNull();
    expect(row).toMatchObject({ owner_id: creator.id, tenant_id: 'acme' });
    expect(events).toEqual([{ name: 'agent.changed', payload: { agentId: agent.id, change: 'created' } }]);

    const principal = await runtimeAuth(token);
    expect(principal).toMatchObject({ via: 'runtime_token', agentId: agent.id });
  });

  it('lists and gets agents with the full shape and no secret', async () => {
    const { agent } = await createAgent(creator, { upstreamSecret: 'hidden-value', description: 'd' });
    const list = await call('GET', base, { token: creator.token });
    expect(list.status).toBe(200);
    const listed = list.body.agents.find((a: { id: string }) => a.id === agent.id);
    const got = await call('GET', `${base}/${agent.id}`, { token: creator.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ agent: listed });
    expect(listed).toEqual({
      ...agent,
      description: 'd',
      tenantId: 'acme',
      ownerId: creator.id,
      toolSurface: 'all',
      updatedAt: expect.any(String),
    });
    expect(JSON.stringify(list.body)).not.toContain('hidden-value');
  });

  it('refuses an upstreamUrl the egress policy always forbids (metadata, link-local) with 400 naming the field', async () => {
    for (const upstreamUrl of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://metadata.google.internal/',
    ]) {
      const res = await call('POST', base, { token: creator.token, body: { name: 'Probe', upstreamUrl } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'upstreamUrl' });
    }
    const { agent } = await createAgent(creator);
    const update = await call('PUT', `${base}/${agent.id}`, {
      token: creator.token,
      body: { upstreamUrl: 'http://169.254.170.2/creds' },
    });
    expect(update).toMatchObject({ status: 400, body: { field: 'upstreamUrl' } });
  });

  it('updates fields and sets, replaces and clears the upstream secret', async () => {
    const { agent } = await createAgent(creator);
    const box = secretBoxFor(deps.config);
    const sealed = async () =>
      (
        await deps.db
          .selectFrom('agents')
          .select('upstream_secret_enc')
          .where('id', '=', agent.id)
          .executeTakeFirstOrThrow()
      ).upstream_secret_enc;

    const res = await call('PUT', `${base}/${agent.id}`, {
      token: creator.token,
      body: {
        name: 'Renamed',
        upstreamUrl: 'http://127.0.0.1:9999/run',
        description: 'now described',
        requireConfirmation: true,
        requiredCredentials: [{ serviceType: 'github_token' }],
        upstreamSecret: 'first',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      agent: expect.objectContaining({
        id: agent.id,
        name: 'Renamed',
        upstreamUrl: 'http://127.0.0.1:9999/run',
        description: 'now described',
        requireConfirmation: true,
        requiredCredentials: [{ serviceType: 'github_token' }],
        hasUpstreamSecret: true,
      }),
    });
    expect(box.open((await sealed())!, agent.id)).toBe('first');
    expect(events).toContainEqual({ name: 'agent.changed', payload: { agentId: agent.id, change: 'updated' } });

    await call('PUT', `${base}/${agent.id}`, { token: creator.token, body: { upstreamSecret: 'second' } });
    expect(box.open((await sealed())!, agent.id)).toBe('second');

    const kept = await call('PUT', `${base}/${agent.id}`, { token: creator.token, body: { name: 'Kept secret' } });
    expect(kept.body.agent.hasUpstreamSecret).toBe(true);

    const cleared = await call('PUT', `${base}/${agent.id}`, {
      token: creator.token,
      body: { upstreamSecret: null, description: null },
    });
    expect(cleared.body.agent).toMatchObject({ hasUpstreamSecret: false, description: null });
    expect(await sealed()).toBeNull();
  });

  it('disables and enables the agent; a disabled agent is refused at once', async () => {
    const { agent, runtime_token: token } = await createAgent(creator);
    const disabled = await call('POST', `${base}/${agent.id}/disable`, { token: creator.token });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ success: true, agent: { id: agent.id, isActive: false } });
    expect(events).toContainEqual({ name: 'agent.changed', payload: { agentId: agent.id, change: 'disabled' } });
    await expect(runtimeAuth(token)).rejects.toMatchObject({ status: 403, code: 'AGENT_DISABLED' });

    const enabled = await call('POST', `${base}/${agent.id}/enable`, { token: creator.token });
    expect(enabled.body.agent.isActive).toBe(true);
    expect(events).toContainEqual({ name: 'agent.changed', payload: { agentId: agent.id, change: 'enabled' } });
    await expect(runtimeAuth(token)).resolves.toMatchObject({ agentId: agent.id });
  });

  it('regenerates the runtime token; the old token fails at once', async () => {
    const { agent, runtime_token: oldToken } = await createAgent(creator);
    await runtimeAuth(oldToken); // warm the auth caches
    const res = await call('POST', `${base}/${agent.id}/regenerate-token`, { token: creator.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, runtime_token: expect.stringMatching(/^art_/) });
    expect(res.body.runtime_token).not.toBe(oldToken);
    expect(events).toContainEqual({ name: 'agent.changed', payload: { agentId: agent.id, change: 'token_rotated' } });
    await expect(runtimeAuth(oldToken)).rejects.toMatchObject({ status: 401 });
    await expect(runtimeAuth(res.body.runtime_token)).resolves.toMatchObject({ agentId: agent.id });
    const got = await call('GET', `${base}/${agent.id}`, { token: creator.token });
    expect(res.body.runtime_token.startsWith(got.body.agent.runtimeTokenPrefix)).toBe(true);
  });

  it('deletes the agent with its access rules', async () => {
    const { agent, runtime_token: token } = await createAgent(creator);
    const now = new Date();
    const rule = {
      subject_type: 'agent' as const,
      provider_id: '*',
      action: 'allow' as const,
      tenant_id: 'acme',
      created_at: now,
      updated_at: now,
    };
    const keptRuleId = newId();
    await deps.db
      .insertInto('access_rules')
      .values([
        { ...rule, id: newId(), subject_id: agent.id },
        { ...rule, id: keptRuleId, subject_id: newId() },
      ])
      .execute();

    const res = await call('DELETE', `${base}/${agent.id}`, { token: creator.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    const rules = await deps.db.selectFrom('access_rules').select('id').where('subject_id', '=', agent.id).execute();
    expect(rules).toEqual([]);
    expect(
      await deps.db.selectFrom('access_rules').select('id').where('id', '=', keptRuleId).executeTakeFirst(),
    ).toBeDefined();
    expect(events).toEqual(
      expect.arrayContaining([
        {
          name: 'agent.changed',
          payload: { agentId: agent.id, change: 'deleted' } satisfies GatewayEvents['agent.changed'],
        },
        { name: 'rules.changed', payload: { subjectType: 'agent', subjectId: agent.id } },
      ]),
    );
    expect((await call('GET', `${base}/${agent.id}`, { token: creator.token })).status).toBe(404);
    await expect(runtimeAuth(token)).rejects.toMatchObject({ status: 401 });
  });

  it("hides other users' agents from an agent_creator (404) and lists only their own", async () => {
    const { agent } = await createAgent(otherCreator);
    const own = await createAgent(creator);
    const list = await call('GET', base, { token: creator.token });
    const ids = list.body.agents.map((a: { id: string }) => a.id);
    expect(ids).toContain(own.agent.id);
    expect(ids).not.toContain(agent.id);
    expect(list.body.agents.every((a: { ownerId: string }) => a.ownerId === creator.id)).toBe(true);
    for (const [method, path, body] of [
      ['GET', `${base}/${agent.id}`],
      ['PUT', `${base}/${agent.id}`, { name: 'hijack' }],
      ['DELETE', `${base}/${agent.id}`],
      ['POST', `${base}/${agent.id}/disable`],
      ['POST', `${base}/${agent.id}/enable`],
      ['POST', `${base}/${agent.id}/regenerate-token`],
    ] as const) {
      expect((await call(method, path, { token: creator.token, body })).status, `${method} ${path}`).toBe(404);
    }
  });

  it("lets a tenant_admin manage its tenant's agents, read global ones, but not change them", async () => {
    const tenantAgent = await createAgent(creator);
    const globalAgent = await createAgent(admin);
    const list = await call('GET', base, { token: tenantAdmin.token });
    const ids = list.body.agents.map((a: { id: string }) => a.id);
    expect(ids).toEqual(expect.arrayContaining([tenantAgent.agent.id, globalAgent.agent.id]));

    const updated = await call('PUT', `${base}/${tenantAgent.agent.id}`, {
      token: tenantAdmin.token,
      body: { name: 'By tenant admin' },
    });
    expect(updated.status).toBe(200);
    expect((await call('POST', `${base}/${tenantAgent.agent.id}/disable`, { token: tenantAdmin.token })).status).toBe(
      200,
    );

    const global = await call('PUT', `${base}/${globalAgent.agent.id}`, {
      token: tenantAdmin.token,
      body: { name: 'nope' },
    });
    expect(global.status).toBe(403);
    expect((await call('DELETE', `${base}/${globalAgent.agent.id}`, { token: tenantAdmin.token })).status).toBe(403);
    expect((await call('DELETE', `${base}/${tenantAgent.agent.id}`, { token: tenantAdmin.token })).status).toBe(200);
  });

  it('pins non-admins to their tenant and lets an admin choose', async () => {
    const pinned = await call('POST', base, {
      token: creator.token,
      body: { name: 'x', upstreamUrl: 'https://a.example.test', tenantId: 'globex' },
    });
    expect(pinned.status).toBe(403);
    const same = await createAgent(creator, { tenantId: 'acme' });
    expect((await call('GET', `${base}/${same.agent.id}`, { token: creator.token })).body.agent.tenantId).toBe('acme');
    const scoped = await createAgent(admin, { tenantId: 'globex' });
    expect((await call('GET', `${base}/${scoped.agent.id}`, { token: admin.token })).body.agent.tenantId).toBe(
      'globex',
    );
    expect((await call('GET', `${base}/${scoped.agent.id}`, { token: tenantAdmin.token })).status).toBe(404);
  });

  it.each([
    ['a non-http upstreamUrl', { name: 'x', upstreamUrl: 'ftp://files.example.test' }, 'upstreamUrl'],
    ['a relative upstreamUrl', { name: 'x', upstreamUrl: '/local' }, 'upstreamUrl'],
    [
      'a bad serviceType',
      { name: 'x', upstreamUrl: 'https://a.example.test', requiredCredentials: [{ serviceType: 'Bad-Type' }] },
      'requiredCredentials.0.serviceType',
    ],
    [
      'a missing serviceType',
      { name: 'x', upstreamUrl: 'https://a.example.test', requiredCredentials: [{ description: 'd' }] },
      'requiredCredentials.0.serviceType',
    ],
    [
      'a wrongly typed flag',
      { name: 'x', upstreamUrl: 'https://a.example.test', requireConfirmation: 'yes' },
      'requireConfirmation',
    ],
    ['a missing name', { upstreamUrl: 'https://a.example.test' }, 'name'],
    ['a missing upstreamUrl', { name: 'x' }, 'upstreamUrl'],
  ])('answers 400 naming the field for %s', async (_label, body, field) => {
    const res = await call('POST', base, { token: creator.token, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });

  it('answers 400 for malformed JSON and bad updates, 404 for unknown ids, 401 without a token', async () => {
    expect((await call('POST', base, { token: creator.token, rawBody: '{"name":' })).status).toBe(400);
    const { agent } = await createAgent(creator);
    const bad = await call('PUT', `${base}/${agent.id}`, {
      token: creator.token,
      body: { upstreamUrl: 'javascript:alert(1)' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('upstreamUrl');
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await call('GET', `${base}/${unknown}`, { token: admin.token })).status).toBe(404);
    expect((await call('PUT', `${base}/${unknown}`, { token: admin.token, body: { name: 'x' } })).status).toBe(404);
    expect((await call('POST', `${base}/${unknown}/disable`, { token: admin.token })).status).toBe(404);
    expect((await call('GET', base)).status).toBe(401);
    expect((await call('GET', base, { token: 'not-a-jwt' })).status).toBe(401);
  });
});
