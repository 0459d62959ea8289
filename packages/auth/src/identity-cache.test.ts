import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, MemoryEventBus, newId, type Unsubscribe } from '@agentgw/core';
import { json } from '@agentgw/db';
import { openTestDatabase } from '@agentgw/db/testing';
import { databaseAgentIdentities, IdentityCache } from './identity-cache.js';
import { generateApiKey, generateRuntimeToken } from './tokens.js';

describe('identity cache', () => {
  let handle: Awaited<ReturnType<typeof openTestDatabase>>;
  const bus = new MemoryEventBus();
  const clock = new ManualClock(Date.now());
  let cache: IdentityCache;
  let stop: Unsubscribe;
  const userId = newId();

  beforeAll(async () => {
    handle = await openTestDatabase('pglite');
    await handle.db
      .insertInto('users')
      .values({
        id: userId,
        email: 'Ann@A.io',
        roles: ['tenant_admin'],
        tenant_id: 'A',
        password_hash: 'unused',
        name: null,
      })
      .execute();
    cache = new IdentityCache(handle.db, clock);
    stop = await cache.listen(bus);
  });
  afterAll(async () => {
    await stop?.();
    await handle?.close();
  });

  it('serves users from memory until user.changed drops them', async () => {
    expect(await cache.userByEmail('ann@a.io')).toMatchObject({ id: userId, roles: ['tenant_admin'] });
    await handle.db
      .updateTable('users')
      .set({ roles: ['agent_creator'] })
      .where('id', '=', userId)
      .execute();
    expect((await cache.userById(userId))?.roles).toEqual(['agent_creator']); // first read by id
    await handle.db
      .updateTable('users')
      .set({ roles: ['admin'] })
      .where('id', '=', userId)
      .execute();
    expect((await cache.userById(userId))?.roles).toEqual(['agent_creator']);
    await bus.publish('user.changed', { userId });
    expect((await cache.userById(userId))?.roles).toEqual(['admin']);
    expect((await cache.userByEmail('ann@a.io'))?.roles).toEqual(['admin']);
  });

  it('maps an API key hash to its key, re-reading the key after apikey.changed; unknown hashes answer null', async () => {
    const key = { id: newId(), key: generateApiKey() };
    await handle.db
      .insertInto('api_keys')
      .values({
        id: key.id,
        name: 'k',
        key_hash: key.key.hash,
        key_prefix: key.key.prefix,
        scopes: ['credentials:resolve'],
        user_id: userId,
        tenant_id: 'A',
      })
      .execute();
    expect(await cache.apiKeyByHash(key.key.hash)).toMatchObject({
      id: key.id,
      revoked: false,
      creatorId: userId,
      keyHash: key.key.hash,
    });
    await handle.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', key.id).execute();
    await bus.publish('apikey.changed', { keyId: key.id });
    expect((await cache.apiKeyByHash(key.key.hash))?.revoked).toBe(true);
    expect(await cache.apiKeyByHash(generateApiKey().hash)).toBeNull();
  });

  it('keeps a verified token until shortly before its exp, and never a failure', async () => {
    let verifications = 0;
    const exp = Math.floor(clock.now().getTime() / 1000) + 60;
    const token = `e30.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.sig`;
    const verify = async () => ++verifications;
    expect(await cache.verifiedOnce('user', token, verify)).toBe(1);
    expect(await cache.verifiedOnce('user', token, verify)).toBe(1);
    expect(await cache.verifiedOnce('login', token, verify)).toBe(2); // another kind is another entry
    clock.advance(56_000); // within the 5 s margin before exp
    expect(await cache.verifiedOnce('user', token, verify)).toBe(3);
    const failing = async () => Promise.reject(new Error('bad signature'));
    await expect(cache.verifiedOnce('user', 'x.y.z', failing)).rejects.toThrow('bad signature');
    await expect(cache.verifiedOnce('user', 'x.y.z', failing)).rejects.toThrow('bad signature');
  });

  it('databaseAgentIdentities reads agents uncached, by id and by token hash', async () => {
    const agents = databaseAgentIdentities(handle.db);
    const token = generateRuntimeToken();
    const id = newId();
    const now = new Date();
    await handle.db
      .insertInto('agents')
      .values({
        id,
        name: 'a',
        upstream_url: 'http://127.0.0.1:9/',
        runtime_token_hash: token.hash,
        runtime_token_prefix: token.prefix,
        required_credentials: json([]),
        tenant_id: 'A',
        is_active: true,
        created_at: now,
        updated_at: now,
      })
      .execute();
    expect(await agents.byTokenHash(token.hash)).toEqual({
      id,
      tenantId: 'A',
      isActive: true,
      runtimeTokenHash: token.hash,
    });
    await handle.db.updateTable('agents').set({ is_active: false }).where('id', '=', id).execute();
    expect((await agents.get(id))?.isActive).toBe(false);
    expect(await agents.get(newId())).toBeNull();
  });
});
