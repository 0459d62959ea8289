import {
  createAuth,
  generateRuntimeToken,
  hashToken,
  tenantScope,
  type AuthService,
  type Principal,
} from '@agentgw/auth';
import {
  AppError,
  loadConfig,
  MemoryEventBus,
  newId,
  resolveProvider,
  silentLogger,
  systemClock,
  type Config,
  type EventBus,
} from '@agentgw/core';
import type { DbHandle, RoleName } from '@agentgw/db';
import { openTestDatabase, testBackends } from '@agentgw/db/testing';
import type { KyselyPlugin } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCatalog, createCatalogAdmin, type Catalog, type CatalogAdmin } from './index.js';

/** Counts every statement the catalog sends, so a test can prove the hot path sends none. */
function countingPlugin(counter: { queries: number }): KyselyPlugin {
  return {
    transformQuery(args) {
      counter.queries += 1;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
}

/** What a service process holds: one database, one bus, one started reader that auth reads its agents through. */
interface Deps {
  config: Config;
  handle: DbHandle;
  bus: EventBus;
  auth: AuthService;
}

const config = loadConfig({
  NODE_ENV: 'test',
  JWT_SECRET: 'catalog-test-jwt-secret-that-is-long-enough-01',
  CREDENTIAL_ENCRYPTION_KEY: 'ab'.repeat(32),
  PLATFORM_SECRETS_KEY: 'ba'.repeat(32),
  LOG_LEVEL: 'silent',
});

async function principalOf(deps: Deps, roles: RoleName[], tenantId: string | null): Promise<Principal> {
  const user = { id: newId(), email: `${newId()}@example.test`, roles, tenantId };
  await deps.handle.db
    .insertInto('users')
    .values({ id: user.id, email: user.email, roles, tenant_id: tenantId, password_hash: 'unused', name: null })
    .execute();
  return deps.auth.authenticate(new Headers({ authorization: `Bearer ${await deps.auth.signUserToken(user)}` }), 'jwt');
}

async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: string }> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return { status: err.status, code: err.code };
}

describe.each(testBackends())('catalog (%s)', (backend) => {
  let deps: Deps;
  let counter: { queries: number };
  let catalog: Catalog & CatalogAdmin;
  let admin: Principal;

  beforeEach(async () => {
    const handle = await openTestDatabase(backend);
    const bus = new MemoryEventBus();
    deps = { config, handle, bus, auth: await createAuth({ config, db: handle.db, bus }) };
    counter = { queries: 0 };
    const counted = {
      config,
      db: handle.db.withPlugin(countingPlugin(counter)),
      bus,
      clock: systemClock,
      logger: silentLogger(),
    };
    const reader = createCatalog(counted);
    const writes = createCatalogAdmin(counted);
    // Reads and writes side by side, as a test sets them up; services only ever hold the reader.
    catalog = {
      ...reader,
      agents: { ...reader.agents, ...writes.agents },
      providers: { ...reader.providers, ...writes.providers },
      rules: { ...reader.rules, ...writes.rules },
    };
    admin = await principalOf(deps, ['admin'], null);
  });
  afterEach(async () => {
    await catalog.stop();
    await deps.auth.close();
    await deps.handle.close();
  });

  /** An agent, two providers and rules, written through the catalog as an admin. */
  async function seed() {
    const { agent } = await catalog.agents.create(admin, {
      name: 'a',
      upstreamUrl: 'http://127.0.0.1:9/',
      upstreamSecret: 'agent-secret',
      tenantId: 't1',
    });
    const github = await catalog.providers.create(admin, {
      name: 'github',
      pattern: 'github_*',
      endpoint: 'http://127.0.0.1:9/mcp',
      authType: 'bearer',
      authSecret: 'gh-secret',
      priority: 0,
      tenantId: 't1',
    });
    const fallback = await catalog.providers.create(admin, {
      name: 'all',
      pattern: '*',
      endpoint: 'http://127.0.0.1:9/mcp',
      authType: 'none',
      priority: -1,
    });
    const other = await catalog.providers.create(admin, {
      name: 'other',
      pattern: '*',
      endpoint: 'http://127.0.0.1:9/mcp',
      authType: 'none',
      priority: 5,
      tenantId: 't2',
    });
    await catalog.rules.replaceForAgent(admin, agent.id, [
      { providerId: github.id, action: 'allow', toolPattern: 'github_*' },
      { providerId: github.id, action: 'deny', toolPattern: 'github_delete_*', riskLevel: 'critical' },
    ]);
    return { agent, github, fallback, other };
  }

  it('answers the hot path from memory once started: no query in steady state', async () => {
    const { agent, github } = await seed();
    const member = await principalOf(deps, ['tenant_admin'], 't1');
    await catalog.start();
    const hotPath = async () => {
      const found = await catalog.agents.getFor(member, agent.id);
      const providers = await catalog.providers.visibleTo(member);
      const routed = resolveProvider(providers, 'github_list_repos');
      return {
        secret: catalog.agents.upstreamSecret(found),
        provider: routed?.id,
        providerSecret: routed && catalog.providers.authSecret(routed),
        allowed: await catalog.rules.providerAllowed({ agentId: agent.id, tenantId: 't1', providerId: github.id }),
        decision: await catalog.rules.decide({
          agentId: agent.id,
          userId: member.userId,
          tenantId: 't1',
          providerId: github.id,
          toolName: 'github_delete_repo',
        }),
      };
    };
    const first = await hotPath();
    expect(first).toMatchObject({
      secret: 'agent-secret',
      provider: github.id,
      providerSecret: 'gh-secret',
      allowed: true,
      decision: { action: 'deny', risk: 'critical', matchedRule: { toolPattern: 'github_delete_*' } },
    });
    const afterWarmUp = counter.queries;
    expect(afterWarmUp).toBeGreaterThan(0);
    for (let i = 0; i < 5; i += 1) expect(await hotPath()).toEqual(first);
    expect(counter.queries).toBe(afterWarmUp);
  });

  it('is where auth reads its agents: runtime tokens answered from the same cache, the kill switch and rotation at once on agent.changed', async () => {
    const { agent, runtimeToken } = await catalog.agents.create(admin, {
      name: 'rt',
      upstreamUrl: 'http://127.0.0.1:9/',
      tenantId: 't1',
    });
    const auth = await createAuth({ config, db: deps.handle.db, bus: deps.bus, agents: catalog.agents });
    const asAgent = (token: string) => auth.authenticate(new Headers({ authorization: `Bearer ${token}` }), 'flexible');
    try {
      await catalog.start();
      expect((await asAgent(runtimeToken)).agentId).toBe(agent.id);
      const warm = counter.queries;
      expect((await asAgent(runtimeToken)).agentId).toBe(agent.id);
      expect((await catalog.agents.getFor(admin, agent.id)).id).toBe(agent.id); // the service's read: the same entry
      expect(counter.queries).toBe(warm);

      // A change nobody announced is not seen: the event is what makes the switch immediate, for both readers at once.
      await deps.handle.db.updateTable('agents').set({ is_active: false }).where('id', '=', agent.id).execute();
      expect((await asAgent(runtimeToken)).agentId).toBe(agent.id);
      await deps.bus.publish('agent.changed', { agentId: agent.id, change: 'disabled' });
      expect(await refusal(asAgent(runtimeToken))).toEqual({ status: 403, code: 'AGENT_DISABLED' });
      expect(await refusal(catalog.agents.getFor(admin, agent.id))).toEqual({ status: 403, code: 'AGENT_DISABLED' });

      await catalog.agents.setActive(admin, agent.id, true);
      const rotated = await catalog.agents.regenerateToken(admin, agent.id);
      expect(await refusal(asAgent(runtimeToken))).toEqual({ status: 401, code: 'INVALID_TOKEN' });
      expect((await asAgent(rotated)).agentId).toBe(agent.id);
      expect(await catalog.agents.byTokenHash(hashToken(generateRuntimeToken().token))).toBeNull();
    } finally {
      await auth.close();
    }
  });

  it('the kill switch and every write take effect at once through the bus events', async () => {
    const { agent, github, fallback } = await seed();
    await catalog.start();
    await catalog.agents.getFor(admin, agent.id);
    await catalog.agents.setActive(admin, agent.id, false);
    expect(await refusal(catalog.agents.getFor(admin, agent.id))).toEqual({ status: 403, code: 'AGENT_DISABLED' });
    await catalog.agents.setActive(admin, agent.id, true);
    expect((await catalog.agents.getFor(admin, agent.id)).isActive).toBe(true);

    expect(resolveProvider(await catalog.providers.visibleTo(admin), 'github_x')?.id).not.toBe(github.id); // t2's priority 5 wins for an admin
    await catalog.providers.update(admin, github.id, { priority: 10, authSecret: 'rotated' });
    const routed = resolveProvider(await catalog.providers.visibleTo(admin), 'github_x');
    expect(routed?.id).toBe(github.id);
    expect(catalog.providers.authSecret(routed!)).toBe('rotated');

    const decide = () =>
      catalog.rules.decide({ agentId: agent.id, tenantId: 't1', providerId: github.id, toolName: 'github_list' });
    expect((await decide()).action).toBe('allow');
    await catalog.rules.replaceForAgent(admin, agent.id, [
      { providerId: '*', action: 'require_confirmation', toolPattern: '*' },
    ]);
    expect(await decide()).toMatchObject({ action: 'require_confirmation', risk: 'medium' });
    // Kept answers (the decision and the provider reach) go with the rules they came from.
    const reach = () => catalog.rules.providerAllowed({ agentId: agent.id, tenantId: 't1', providerId: github.id });
    expect(await reach()).toBe(true);
    await catalog.rules.replaceForAgent(admin, agent.id, [
      { providerId: fallback.id, action: 'allow', toolPattern: '*' },
    ]);
    expect(await reach()).toBe(false);
    expect((await decide()).action).toBe('deny');

    await catalog.agents.delete(admin, agent.id);
    expect(await refusal(catalog.agents.getFor(admin, agent.id))).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect((await decide()).action).toBe('deny');
  });

  it('hides other tenants: agents and providers answer 404, and only own and global providers are listed', async () => {
    const { agent, github, fallback, other } = await seed();
    const stranger = await principalOf(deps, ['tenant_admin'], 't2');
    await catalog.start();
    expect(await refusal(catalog.agents.getFor(stranger, agent.id))).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(await refusal(catalog.agents.getFor(stranger, 'no-such-agent'))).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(await refusal(catalog.providers.getFor(stranger, github.id))).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect((await catalog.providers.visibleTo(stranger)).map((p) => p.id)).toEqual([other.id, fallback.id]);
    expect((await catalog.providers.visibleTo(admin)).map((p) => p.id)).toEqual([other.id, github.id, fallback.id]);
    // Routing stays in the tenant a call acts in: a platform admin routes over global providers only.
    expect((await catalog.providers.routableFor(admin)).map((p) => p.id)).toEqual([fallback.id]);
    expect((await catalog.providers.routableFor(stranger)).map((p) => p.id)).toEqual([other.id, fallback.id]);
    const tenantAdmin = await principalOf(deps, ['admin'], 't1');
    expect((await catalog.providers.routableFor(tenantAdmin)).map((p) => p.id)).toEqual([github.id, fallback.id]);
    // Rules of another tenant never decide a call acting in this one.
    expect(await catalog.rules.providerAllowed({ agentId: agent.id, tenantId: 't2', providerId: github.id })).toBe(
      false,
    );
    expect(await catalog.rules.providerAllowed({ agentId: agent.id, tenantId: 't1', providerId: fallback.id })).toBe(
      false,
    );
  });

  it('keeps what tenant-less non-admins create in their private scope: hidden from tenants and each other, decided in that scope', async () => {
    const creator = await principalOf(deps, ['agent_creator'], null);
    const loner = await principalOf(deps, ['tenant_admin'], null);
    const member = await principalOf(deps, ['tenant_admin'], 't1');
    await catalog.start();
    const { agent } = await catalog.agents.create(creator, { name: 'mine', upstreamUrl: 'http://127.0.0.1:9/' });
    expect((await catalog.agents.getFor(creator, agent.id)).tenantId).toBe(`private:${creator.userId}`);
    for (const other of [member, loner])
      expect(await refusal(catalog.agents.getFor(other, agent.id))).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect((await catalog.agents.getFor(admin, agent.id)).id).toBe(agent.id);

    const provider = await catalog.providers.create(loner, {
      name: 'own',
      pattern: 'own_*',
      endpoint: 'http://127.0.0.1:9/mcp',
      authType: 'none',
      priority: 0,
      tenantId: null,
    });
    expect(provider.tenantId).toBe(`private:${loner.userId}`);
    expect((await catalog.providers.visibleTo(loner)).map((p) => p.id)).toContain(provider.id);
    for (const other of [member, creator]) {
      expect((await catalog.providers.visibleTo(other)).map((p) => p.id)).not.toContain(provider.id);
      expect(await refusal(catalog.providers.getFor(other, provider.id))).toEqual({ status: 404, code: 'NOT_FOUND' });
    }
    const global = await catalog.providers.create(admin, {
      name: 'global',
      pattern: 'g_*',
      endpoint: 'http://127.0.0.1:9/mcp',
      authType: 'none',
      priority: 0,
    });
    expect(global.tenantId).toBeNull();
    expect(await refusal(catalog.providers.update(loner, global.id, { name: 'taken' }))).toEqual({
      status: 403,
      code: 'FORBIDDEN',
    });

    // The owner's rules for its private agent decide its calls in its scope, and nowhere else.
    await catalog.rules.replaceForAgent(creator, agent.id, [
      { providerId: global.id, action: 'allow', toolPattern: 'g_*' },
    ]);
    const decide = (tenantId: string | null) =>
      catalog.rules.decide({
        agentId: agent.id,
        userId: creator.userId,
        tenantId,
        providerId: global.id,
        toolName: 'g_read',
      });
    expect((await decide(tenantScope(creator))).action).toBe('allow');
    expect((await decide('t1')).action).toBe('deny');
    expect((await decide(null)).action).toBe('deny');
  });

  it('reads through to the database when not started, and again after stop()', async () => {
    const { agent } = await seed();
    const before = counter.queries;
    await catalog.agents.get(agent.id);
    await catalog.agents.get(agent.id);
    expect(counter.queries).toBe(before + 2);
    await catalog.start();
    await catalog.agents.get(agent.id);
    await catalog.agents.get(agent.id);
    expect(counter.queries).toBe(before + 3);
    await catalog.stop();
    // A disable published now is not heard; the stopped catalog must not answer from its old copy.
    await deps.handle.db.updateTable('agents').set({ is_active: false }).where('id', '=', agent.id).execute();
    expect((await catalog.agents.get(agent.id))?.isActive).toBe(false);
  });

  it('refuses with 503 a secret no configured key opens, never garbage or a silent null', async () => {
    const { agent, github } = await seed();
    const otherKeys = createCatalog({
      config: { ...config, CREDENTIAL_ENCRYPTION_KEY: 'cd'.repeat(32), PLATFORM_SECRETS_KEY: 'dc'.repeat(32) },
      db: deps.handle.db,
      bus: deps.bus,
      clock: systemClock,
      logger: silentLogger(),
    });
    const record = await otherKeys.agents.get(agent.id);
    expect(() => otherKeys.agents.upstreamSecret(record!)).toThrow(expect.objectContaining({ status: 503 }));
    const provider = await otherKeys.providers.get(github.id);
    expect(() => otherKeys.providers.authSecret(provider!)).toThrow(expect.objectContaining({ status: 503 }));
  });
});
