import { keyIdOf } from '@agentgw/auth';
import { testBackends } from '@agentgw/db/testing';
import { testConfig, testHost } from '@agentgw/service-kit/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { vaultService } from './service.js';
import { createVault } from '@agentgw/credentials';
import { KEY_A, KEY_B, startVaultUnderTest, type VaultFixture } from './vault.fixtures.js';

const BASE = '/api/v1/credentials';
const idOf = (hex: string) => keyIdOf(Buffer.from(hex, 'hex'));

describe.each(testBackends())('key rotation (%s)', (backend) => {
  let f: VaultFixture;
  beforeEach(async () => {
    f = await startVaultUnderTest(backend);
  });
  afterEach(async () => {
    await f.close();
  });

  /** The same database served by a vault configured with other keys. */
  async function vaultWith(env: Record<string, string>) {
    const deps = { ...f.deps, config: testConfig({ ...env }) };
    const { app } = await testHost(vaultService, deps);
    const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
      const res = await app.request(path, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    return { deps, call };
  }

  async function seed() {
    const user = await f.user();
    await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'github', apiKey: 'gh-key' });
    await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'openai', apiKey: 'oa-key' });
    return user;
  }

  const keyIds = async () =>
    (await f.deps.db.selectFrom('user_credentials').select('key_id').execute()).map((r) => r.key_id);

  it('a vault holding the wrong key fails closed: missing, listed, no 500, no plaintext', async () => {
    const user = await seed();
    const wrong = await vaultWith({ CREDENTIAL_ENCRYPTION_KEY: KEY_B });
    const resolved = await wrong.call('POST', `${BASE}/resolve`, user.headers, { serviceTypes: ['github', 'openai'] });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ credentials: {}, missing: ['github', 'openai'] });
    const checked = await wrong.call('GET', `${BASE}/check/github`, user.headers);
    expect(checked).toMatchObject({ status: 200, body: { hasCredential: false, authUrl: expect.any(String) } });
    expect((await wrong.call('GET', BASE, user.headers)).body.credentials).toHaveLength(2);
  });

  it('keeps old rows readable with the previous key and re-encrypts them under the new one', async () => {
    const user = await seed();
    expect(await keyIds()).toEqual([idOf(KEY_A), idOf(KEY_A)]);

    const rotated = await vaultWith({ CREDENTIAL_ENCRYPTION_KEY: KEY_B, CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: KEY_A });
    expect(
      (await rotated.call('POST', `${BASE}/resolve`, user.headers, { serviceTypes: ['github', 'openai'] })).body
        .credentials,
    ).toEqual({
      github: 'gh-key',
      openai: 'oa-key',
    });

    // New writes use the new key at once.
    await rotated.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'slack', apiKey: 'sl-key' });
    expect((await keyIds()).sort()).toEqual([idOf(KEY_A), idOf(KEY_A), idOf(KEY_B)].sort());

    expect(await createVault(rotated.deps).reencryptAll()).toEqual({ reencrypted: 2, unreadable: 0 });
    expect(await keyIds()).toEqual([idOf(KEY_B), idOf(KEY_B), idOf(KEY_B)]);
    expect(await createVault(rotated.deps).reencryptAll()).toEqual({ reencrypted: 0, unreadable: 0 });

    // The previous key can now be dropped.
    const newOnly = await vaultWith({ CREDENTIAL_ENCRYPTION_KEY: KEY_B });
    expect(
      (await newOnly.call('POST', `${BASE}/resolve`, user.headers, { serviceTypes: ['github', 'openai', 'slack'] }))
        .body,
    ).toMatchObject({
      credentials: { github: 'gh-key', openai: 'oa-key', slack: 'sl-key' },
      missing: [],
    });
  });

  it('reencryptAll leaves rows no configured key opens and counts them', async () => {
    await seed();
    const other = await vaultWith({
      CREDENTIAL_ENCRYPTION_KEY: 'cc'.repeat(32),
      CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: KEY_B,
    });
    expect(await createVault(other.deps).reencryptAll()).toEqual({ reencrypted: 0, unreadable: 2 });
    expect(await keyIds()).toEqual([idOf(KEY_A), idOf(KEY_A)]);
  });

  it('rejects a malformed CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS', () => {
    expect(() => testConfig({ CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: `${KEY_A},not-a-key` })).toThrow(
      /CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS/,
    );
  });
});
