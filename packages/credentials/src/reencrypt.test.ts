import { hkdfSync } from 'node:crypto';
import { keyIdOf, seal, secretBoxFor, type Principal } from '@agentgw/auth';
import { createCatalog, createCatalogAdmin } from '@agentgw/catalog';
import { json } from '@agentgw/db';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testConfig, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, tokenFor } from '@agentgw/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVault, reencryptAllSecrets } from './index.js';

const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
const KEY_C = 'cc'.repeat(32);
/** Platform keys (PLATFORM_SECRETS_KEY). */
const PLAT_A = 'a1'.repeat(32);
const PLAT_B = 'b2'.repeat(32);
const PLAT_C = 'c3'.repeat(32);

describe.each(testBackends())('key rotation of every sealed secret (%s)', (backend) => {
  let deps: TestDeps;
  beforeEach(async () => {
    deps = await createTestDeps({ backend, env: { CREDENTIAL_ENCRYPTION_KEY: KEY_A, PLATFORM_SECRETS_KEY: PLAT_A } });
  });
  afterEach(async () => {
    await deps.close();
  });

  /** The same database seen by services configured with other keys. */
  const withKeys = (env: Record<string, string>) => ({ ...deps, config: testConfig(env) });

  /** One secret of each kind, sealed under KEY_A (user credential) and PLAT_A (the rest) through the code that writes them in production. */
  async function seed() {
    const user = await createUser(deps, { email: 'owner@example.test', roles: ['admin'] });
    const admin: Principal = await deps.auth.authenticate(
      new Headers({ authorization: `Bearer ${await tokenFor(deps, user)}` }),
      'jwt',
    );
    await createVault(deps).store({
      userId: user.id,
      tenantId: null,
      serviceType: 'github',
      kind: 'api_key',
      secret: 'user-gh-key',
      expiresAt: null,
    });
    const catalog = createCatalogAdmin(deps);
    const { agent } = await catalog.agents.create(admin, {
      name: 'a',
      upstreamUrl: 'http://127.0.0.1:9/',
      upstreamSecret: 'agent-upstream-secret',
    });
    const provider = await catalog.providers.create(admin, {
      name: 'p',
      pattern: '*',
      endpoint: 'http://127.0.0.1:9/mcp',
      authType: 'bearer',
      authSecret: 'provider-auth-secret',
      priority: 0,
    });
    const credentialProviderId = 'cp-1';
    await deps.db
      .insertInto('credential_providers')
      .values({
        id: credentialProviderId,
        name: 'oauth',
        service_type: 'gdrive',
        auth_type: 'oauth2',
        description: null,
        tenant_id: null,
        config: json({
          clientId: 'public-id',
          clientSecret: secretBoxFor(deps.config).seal('oauth-client-secret', credentialProviderId),
        }),
      })
      .execute();
    return { user, agent, provider, credentialProviderId };
  }

  /** Every secret as the services open it: vault resolve, the catalog's agent and provider secrets, the platform ring. */
  async function openAll(env: Record<string, string>, ids: Awaited<ReturnType<typeof seed>>) {
    const services = withKeys(env);
    const catalog = createCatalog(services);
    const attempt = (open: () => string | null) => {
      try {
        return open();
      } catch (err) {
        return `refused ${(err as { status?: number }).status}`;
      }
    };
    const agent = (await catalog.agents.get(ids.agent.id))!;
    const provider = (await catalog.providers.get(ids.provider.id))!;
    const stored = await deps.db
      .selectFrom('credential_providers')
      .select('config')
      .where('id', '=', ids.credentialProviderId)
      .executeTakeFirstOrThrow();
    const resolved = await createVault(services).resolve({
      userId: ids.user.id,
      tenantId: null,
      serviceTypes: ['github'],
      recipient: { kind: 'owner' },
    });
    return {
      userCredential: resolved.credentials.github ?? null,
      agentUpstreamSecret: attempt(() => catalog.agents.upstreamSecret(agent)),
      providerAuthSecret: attempt(() => catalog.providers.authSecret(provider)),
      credentialProviderSecret: secretBoxFor(services.config).open(
        stored.config.clientSecret as string,
        ids.credentialProviderId,
      ),
    };
  }

  const everyValue = {
    userCredential: 'user-gh-key',
    agentUpstreamSecret: 'agent-upstream-secret',
    providerAuthSecret: 'provider-auth-secret',
    credentialProviderSecret: 'oauth-client-secret',
  };
  const noPlatformSecret = {
    agentUpstreamSecret: 'refused 503',
    providerAuthSecret: 'refused 503',
    credentialProviderSecret: null,
  };
  const one = { reencrypted: 1, unreadable: 0 };
  const none = { reencrypted: 0, unreadable: 0 };

  it('credential key: seal with A, rotate to B with A as previous, reencrypt, drop A: everything still opens', async () => {
    const ids = await seed();
    const rotated = {
      CREDENTIAL_ENCRYPTION_KEY: KEY_B,
      CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: KEY_A,
      PLATFORM_SECRETS_KEY: PLAT_A,
    };
    const newOnly = { CREDENTIAL_ENCRYPTION_KEY: KEY_B, PLATFORM_SECRETS_KEY: PLAT_A };

    expect(await openAll(rotated, ids)).toEqual(everyValue);
    // Dropping A before re-encrypting loses the user credential: this is what reencrypt must prevent.
    expect(await openAll(newOnly, ids)).toEqual({ ...everyValue, userCredential: null });

    // Only user credentials are under the credential key: the platform secrets are already current.
    expect(await reencryptAllSecrets(withKeys(rotated))).toEqual({
      userCredentials: one,
      agentUpstreamSecrets: none,
      providerAuthSecrets: none,
      credentialProviderSecrets: none,
    });
    expect(await openAll(newOnly, ids)).toEqual(everyValue);
    const credentialRow = await deps.db.selectFrom('user_credentials').select('key_id').executeTakeFirstOrThrow();
    expect(credentialRow.key_id).toBe(keyIdOf(Buffer.from(KEY_B, 'hex')));
    expect(await openAll({ CREDENTIAL_ENCRYPTION_KEY: KEY_A, PLATFORM_SECRETS_KEY: PLAT_A }, ids)).toEqual({
      ...everyValue,
      userCredential: null,
    });
  });

  it('platform key: seal with A, rotate to B with A as previous, reencrypt, drop A: everything still opens', async () => {
    const ids = await seed();
    const rotated = {
      CREDENTIAL_ENCRYPTION_KEY: KEY_A,
      PLATFORM_SECRETS_KEY: PLAT_B,
      PLATFORM_SECRETS_PREVIOUS_KEYS: PLAT_A,
    };
    const newOnly = { CREDENTIAL_ENCRYPTION_KEY: KEY_A, PLATFORM_SECRETS_KEY: PLAT_B };

    expect(await openAll(rotated, ids)).toEqual(everyValue);
    expect(await openAll(newOnly, ids)).toEqual({ ...everyValue, ...noPlatformSecret });

    expect(await reencryptAllSecrets(withKeys(rotated))).toEqual({
      userCredentials: none,
      agentUpstreamSecrets: one,
      providerAuthSecrets: one,
      credentialProviderSecrets: one,
    });
    expect(await reencryptAllSecrets(withKeys(rotated))).toEqual({
      userCredentials: none,
      agentUpstreamSecrets: none,
      providerAuthSecrets: none,
      credentialProviderSecrets: none,
    });

    expect(await openAll(newOnly, ids)).toEqual(everyValue);
    const agentRow = await deps.db
      .selectFrom('agents')
      .select('upstream_secret_enc')
      .where('id', '=', ids.agent.id)
      .executeTakeFirstOrThrow();
    expect(secretBoxFor(testConfig(newOnly)).isCurrent(agentRow.upstream_secret_enc!)).toBe(true);
    // The old platform key opens nothing any more.
    expect(await openAll({ CREDENTIAL_ENCRYPTION_KEY: KEY_A, PLATFORM_SECRETS_KEY: PLAT_A }, ids)).toEqual({
      ...everyValue,
      ...noPlatformSecret,
    });
  });

  it('migration: platform secrets sealed under the old HKDF subkey of the credential key open where the credential key is, and reencrypt moves them', async () => {
    const ids = await seed();
    // What the gateway stored before PLATFORM_SECRETS_KEY existed: the secret under HKDF(credential key, "agentgw upstream-secrets").
    const legacyKey = Buffer.from(
      hkdfSync('sha256', Buffer.from(KEY_A, 'hex'), Buffer.alloc(0), 'agentgw upstream-secrets', 32),
    );
    await deps.db
      .updateTable('agents')
      .set({ upstream_secret_enc: seal(legacyKey, 'agent-upstream-secret', ids.agent.id) })
      .where('id', '=', ids.agent.id)
      .execute();
    await deps.db
      .updateTable('tool_providers')
      .set({ auth_secret_enc: seal(legacyKey, 'provider-auth-secret', ids.provider.id) })
      .where('id', '=', ids.provider.id)
      .execute();
    const platformOnly = { PLATFORM_SECRETS_KEY: PLAT_A, CREDENTIAL_ENCRYPTION_KEY: '' }; // blank is unset
    const agentSecret = async (env: Record<string, string>) => {
      const catalog = createCatalog(withKeys(env));
      const agent = (await catalog.agents.get(ids.agent.id))!;
      const provider = (await catalog.providers.get(ids.provider.id))!;
      return [catalog.agents.upstreamSecret(agent), catalog.providers.authSecret(provider)];
    };

    // The all-in-one (both keys) still opens them; a distributed service holding only the platform key cannot yet.
    expect(await agentSecret({ CREDENTIAL_ENCRYPTION_KEY: KEY_A, PLATFORM_SECRETS_KEY: PLAT_A })).toEqual([
      'agent-upstream-secret',
      'provider-auth-secret',
    ]);
    await expect(agentSecret(platformOnly)).rejects.toMatchObject({ status: 503 });

    expect(
      await reencryptAllSecrets(withKeys({ CREDENTIAL_ENCRYPTION_KEY: KEY_A, PLATFORM_SECRETS_KEY: PLAT_A })),
    ).toEqual({
      userCredentials: none,
      agentUpstreamSecrets: one,
      providerAuthSecrets: one,
      credentialProviderSecrets: none,
    });
    expect(await agentSecret(platformOnly)).toEqual(['agent-upstream-secret', 'provider-auth-secret']);
  });

  it('counts what no configured key opens and leaves it untouched', async () => {
    const ids = await seed();
    const before = await deps.db
      .selectFrom('agents')
      .select('upstream_secret_enc')
      .where('id', '=', ids.agent.id)
      .executeTakeFirstOrThrow();
    const unreadable = { reencrypted: 0, unreadable: 1 };
    const wrongKeys = {
      CREDENTIAL_ENCRYPTION_KEY: KEY_C,
      CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: KEY_B,
      PLATFORM_SECRETS_KEY: PLAT_C,
      PLATFORM_SECRETS_PREVIOUS_KEYS: PLAT_B,
    };
    expect(await reencryptAllSecrets(withKeys(wrongKeys))).toEqual({
      userCredentials: unreadable,
      agentUpstreamSecrets: unreadable,
      providerAuthSecrets: unreadable,
      credentialProviderSecrets: unreadable,
    });
    const after = await deps.db
      .selectFrom('agents')
      .select('upstream_secret_enc')
      .where('id', '=', ids.agent.id)
      .executeTakeFirstOrThrow();
    expect(after).toEqual(before);
    expect(await openAll({ CREDENTIAL_ENCRYPTION_KEY: KEY_A, PLATFORM_SECRETS_KEY: PLAT_A }, ids)).toEqual(everyValue);
  });
});
