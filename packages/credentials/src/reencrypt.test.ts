import { keyIdOf, secretBoxFor, type Principal } from '@agentgw/auth';
import { createCatalog } from '@agentgw/catalog';
import { json } from '@agentgw/db';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testConfig, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, tokenFor } from '@agentgw/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVault, reencryptAllSecrets } from './index.js';

const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
const KEY_C = 'cc'.repeat(32);

describe.each(testBackends())('key rotation of every sealed secret (%s)', (backend) => {
  let deps: TestDeps;
  beforeEach(async () => {
    deps = await createTestDeps({ backend, env: { CREDENTIAL_ENCRYPTION_KEY: KEY_A } });
  });
  afterEach(async () => {
    await deps.close();
  });

  /** The same database seen by services configured with other keys. */
  const withKeys = (env: Record<string, string>) => ({ ...deps, config: testConfig(env) });

  /** One secret of each kind, all sealed under key A through the code that writes them in production. */
  async function seed() {
    const user = await createUser(deps, { email: 'owner@example.test', roles: ['admin'] });
    const admin: Principal = await deps.auth.authenticate(new Headers({ authorization: `Bearer ${await tokenFor(deps, user)}` }), 'jwt');
    await createVault(deps).store({ userId: user.id, tenantId: null, serviceType: 'github', kind: 'api_key', secret: 'user-gh-key', expiresAt: null });
    const catalog = createCatalog(deps);
    const { agent } = await catalog.agents.create(admin, { name: 'a', upstreamUrl: 'http://127.0.0.1:9/', upstreamSecret: 'agent-upstream-secret' });
    const provider = await catalog.providers.create(admin, {
      name: 'p', pattern: '*', endpoint: 'http://127.0.0.1:9/mcp', authType: 'bearer', authSecret: 'provider-auth-secret', priority: 0,
    });
    const credentialProviderId = 'cp-1';
    await deps.db
      .insertInto('credential_providers')
      .values({
        id: credentialProviderId, name: 'oauth', service_type: 'gdrive', auth_type: 'oauth2', description: null, tenant_id: null,
        config: json({ clientId: 'public-id', clientSecret: secretBoxFor(deps.config).seal('oauth-client-secret', credentialProviderId) }),
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
    const stored = await deps.db.selectFrom('credential_providers').select('config').where('id', '=', ids.credentialProviderId).executeTakeFirstOrThrow();
    const resolved = await createVault(services).resolve({ userId: ids.user.id, tenantId: null, serviceTypes: ['github'] });
    return {
      userCredential: resolved.credentials.github ?? null,
      agentUpstreamSecret: attempt(() => catalog.agents.upstreamSecret(agent)),
      providerAuthSecret: attempt(() => catalog.providers.authSecret(provider)),
      credentialProviderSecret: secretBoxFor(services.config).open(stored.config.clientSecret as string, ids.credentialProviderId),
    };
  }

  const everyValue = {
    userCredential: 'user-gh-key',
    agentUpstreamSecret: 'agent-upstream-secret',
    providerAuthSecret: 'provider-auth-secret',
    credentialProviderSecret: 'oauth-client-secret',
  };

  it('seal with A, rotate to B with A as previous, reencrypt, drop A: everything still opens', async () => {
    const ids = await seed();
    const rotated = { CREDENTIAL_ENCRYPTION_KEY: KEY_B, CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: KEY_A };
    const newOnly = { CREDENTIAL_ENCRYPTION_KEY: KEY_B };

    expect(await openAll(rotated, ids)).toEqual(everyValue);
    // Dropping A before re-encrypting loses every kind: this is what reencrypt must prevent.
    expect(await openAll(newOnly, ids)).toEqual({
      userCredential: null,
      agentUpstreamSecret: 'refused 503',
      providerAuthSecret: 'refused 503',
      credentialProviderSecret: null,
    });

    const one = { reencrypted: 1, unreadable: 0 };
    expect(await reencryptAllSecrets(withKeys(rotated))).toEqual({
      userCredentials: one, agentUpstreamSecrets: one, providerAuthSecrets: one, credentialProviderSecrets: one,
    });
    const none = { reencrypted: 0, unreadable: 0 };
    expect(await reencryptAllSecrets(withKeys(rotated))).toEqual({
      userCredentials: none, agentUpstreamSecrets: none, providerAuthSecrets: none, credentialProviderSecrets: none,
    });

    expect(await openAll(newOnly, ids)).toEqual(everyValue);
    const credentialRow = await deps.db.selectFrom('user_credentials').select('key_id').executeTakeFirstOrThrow();
    expect(credentialRow.key_id).toBe(keyIdOf(Buffer.from(KEY_B, 'hex')));
    // The old key opens nothing any more.
    expect(await openAll({ CREDENTIAL_ENCRYPTION_KEY: KEY_A }, ids)).toEqual({
      userCredential: null,
      agentUpstreamSecret: 'refused 503',
      providerAuthSecret: 'refused 503',
      credentialProviderSecret: null,
    });
  });

  it('counts what no configured key opens and leaves it untouched', async () => {
    const ids = await seed();
    const before = await deps.db.selectFrom('agents').select('upstream_secret_enc').where('id', '=', ids.agent.id).executeTakeFirstOrThrow();
    const one = { reencrypted: 0, unreadable: 1 };
    expect(await reencryptAllSecrets(withKeys({ CREDENTIAL_ENCRYPTION_KEY: KEY_C, CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: KEY_B }))).toEqual({
      userCredentials: one, agentUpstreamSecrets: one, providerAuthSecrets: one, credentialProviderSecrets: one,
    });
    const after = await deps.db.selectFrom('agents').select('upstream_secret_enc').where('id', '=', ids.agent.id).executeTakeFirstOrThrow();
    expect(after).toEqual(before);
    expect(await openAll({ CREDENTIAL_ENCRYPTION_KEY: KEY_A }, ids)).toEqual(everyValue);
  });
});
