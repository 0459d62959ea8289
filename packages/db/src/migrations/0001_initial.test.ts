import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../connection.js';
import { isUniqueViolation } from '../errors.js';
import { json } from '../json.js';
import { openTestDatabase, testBackends } from '../testing.js';

let seq = 0;
const id = (prefix: string) => `${prefix}_${++seq}`;

/** Resolves to the error the promise rejected with (fails the test if it resolved). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the statement to fail');
}

describe.each(testBackends())('initial schema on %s', (backend) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDatabase(backend);
  });
  afterAll(() => handle.close());

  const addUser = async (email = `${id('u')}@example.com`) => {
    const userId = id('user');
    await handle.db
      .insertInto('users')
      .values({ id: userId, email, password_hash: 'h', roles: ['agent_creator'] })
      .execute();
    return userId;
  };
  const addAgent = (runtimeTokenHash: string) =>
    handle.db
      .insertInto('agents')
      .values({
        id: id('agent'),
        name: 'a',
        upstream_url: 'http://127.0.0.1:1',
        required_credentials: json([]),
        runtime_token_hash: runtimeTokenHash,
        runtime_token_prefix: 'art_x',
      })
      .execute();

  it('rejects a second user whose email differs only in case', async () => {
    await addUser('Alice@Example.com');
    const err = await failure(addUser('alice@example.COM'));
    expect(isUniqueViolation(err)).toBe(true);
  });

  it('rejects a duplicate runtime token hash and API key hash', async () => {
    await addAgent('hash-1');
    expect(isUniqueViolation(await failure(addAgent('hash-1')))).toBe(true);

    const key = (keyHash: string) =>
      handle.db
        .insertInto('api_keys')
        .values({ id: id('key'), name: 'k', key_hash: keyHash, key_prefix: 'gk_x', scopes: ['credentials:read'] })
        .execute();
    await key('key-hash-1');
    expect(isUniqueViolation(await failure(key('key-hash-1')))).toBe(true);
  });

  it('allows one credential provider per service type per tenant, global included', async () => {
    const provider = (tenantId: string | null) =>
      handle.db
        .insertInto('credential_providers')
        .values({
          id: id('cp'),
          name: 'GitHub',
          service_type: 'github',
          auth_type: 'oauth2',
          config: json({}),
          tenant_id: tenantId,
        })
        .execute();
    await provider(null);
    await provider('t1');
    await provider('t2');
    expect(isUniqueViolation(await failure(provider(null)))).toBe(true);
    expect(isUniqueViolation(await failure(provider('t1')))).toBe(true);
  });

  it('keeps one credential per user and service type, and one device per user and push token', async () => {
    const userId = await addUser();
    const credential = () =>
      handle.db
        .insertInto('user_credentials')
        .values({
          id: id('cred'),
          user_id: userId,
          service_type: 'github',
          kind: 'api_key',
          ciphertext: 'c',
          nonce: 'n',
          key_id: 'k1',
          metadata: json({}),
        })
        .execute();
    await credential();
    expect(isUniqueViolation(await failure(credential()))).toBe(true);

    const device = () =>
      handle.db
        .insertInto('devices')
        .values({ id: id('dev'), user_id: userId, platform: 'ios', push_token: 'apns-1' })
        .execute();
    await device();
    expect(isUniqueViolation(await failure(device()))).toBe(true);
  });

  it('rejects values outside the enums', async () => {
    const err = await failure(
      handle.db
        .insertInto('users')
        .values({ id: id('user'), email: 'root@example.com', password_hash: 'h', roles: ['root'] as never })
        .execute(),
    );
    expect(err).toMatchObject({ code: '23514' }); // check_violation
    expect(isUniqueViolation(err)).toBe(false);

    await expect(
      sql`insert into audit_logs (id, tool_name, status) values (${id('audit')}, 't', 'exploded')`.execute(handle.db),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(
      sql`insert into access_rules (id, subject_type, subject_id, provider_id, action, risk_level)
          values (${id('rule')}, 'agent', 'a1', '*', 'allow', 'extreme')`.execute(handle.db),
    ).rejects.toMatchObject({ code: '23514' });
  });

  it('fills defaults', async () => {
    const before = Date.now() - 60_000;
    await addAgent('hash-defaults');
    const agent = await handle.db
      .selectFrom('agents')
      .selectAll()
      .where('runtime_token_hash', '=', 'hash-defaults')
      .executeTakeFirstOrThrow();
    expect(agent).toMatchObject({ is_active: true, require_confirmation: false, description: null });
    expect(agent.created_at).toBeInstanceOf(Date);
    expect(agent.created_at.getTime()).toBeGreaterThan(before);

    const providerId = id('tp');
    await handle.db
      .insertInto('tool_providers')
      .values({ id: providerId, name: 'p', pattern: '*', endpoint: 'http://127.0.0.1:1/mcp' })
      .execute();
    expect(
      await handle.db
        .selectFrom('tool_providers')
        .select(['auth_type', 'priority'])
        .where('id', '=', providerId)
        .executeTakeFirst(),
    ).toEqual({ auth_type: 'none', priority: 0 });

    const ruleId = id('rule');
    await handle.db
      .insertInto('access_rules')
      .values({ id: ruleId, subject_type: 'agent', subject_id: 'a1', provider_id: '*', action: 'allow' })
      .execute();
    expect(
      await handle.db
        .selectFrom('access_rules')
        .select(['tool_pattern', 'risk_level'])
        .where('id', '=', ruleId)
        .executeTakeFirst(),
    ).toEqual({ tool_pattern: '*', risk_level: null });

    const userId = await addUser();
    const deviceId = id('dev');
    await handle.db
      .insertInto('devices')
      .values({ id: deviceId, user_id: userId, platform: 'android', push_token: 'fcm' })
      .execute();
    expect(
      await handle.db.selectFrom('devices').select('is_active').where('id', '=', deviceId).executeTakeFirst(),
    ).toEqual({
      is_active: true,
    });
  });

  it('round-trips jsonb and text[] values', async () => {
    const required = [{ serviceType: 'github', description: 'repo access' }, { serviceType: 'slack' }];
    await handle.db
      .insertInto('agents')
      .values({
        id: id('agent'),
        name: 'j',
        upstream_url: 'http://127.0.0.1:1',
        required_credentials: json(required),
        runtime_token_hash: 'hash-json',
        runtime_token_prefix: 'art_j',
      })
      .execute();
    const agent = await handle.db
      .selectFrom('agents')
      .select('required_credentials')
      .where('runtime_token_hash', '=', 'hash-json')
      .executeTakeFirstOrThrow();
    expect(agent.required_credentials).toEqual(required);

    const auditId = id('audit');
    const args = { path: '/tmp/x', depth: 2, flags: ['a', 'b'], nested: { ok: true, none: null } };
    await handle.db
      .insertInto('audit_logs')
      .values({
        id: auditId,
        tool_name: 'fs.read',
        status: 'completed',
        arguments: json(args),
        result: null,
        duration: 12,
      })
      .execute();
    expect(
      await handle.db
        .selectFrom('audit_logs')
        .select(['arguments', 'result', 'duration'])
        .where('id', '=', auditId)
        .executeTakeFirst(),
    ).toEqual({ arguments: args, result: null, duration: 12 });

    const userId = id('user');
    await handle.db
      .insertInto('users')
      .values({ id: userId, email: `${userId}@example.com`, password_hash: 'h', roles: ['admin', 'tenant_admin'] })
      .execute();
    const user = await handle.db.selectFrom('users').select('roles').where('id', '=', userId).executeTakeFirstOrThrow();
    expect(user.roles).toEqual(['admin', 'tenant_admin']);
    // text[] supports the array operators services filter with.
    const admins = await handle.db
      .selectFrom('users')
      .select('id')
      .where(sql<boolean>`${'admin'} = any(roles)`)
      .execute();
    expect(admins.map((u) => u.id)).toContain(userId);
  });

  it('returns counts as numbers', async () => {
    await addUser();
    const { rows } = await sql<{ n: number }>`select count(*) as n from users`.execute(handle.db);
    expect(typeof rows[0]?.n).toBe('number');
    const counted = await handle.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(counted.n).toBe(rows[0]?.n);
    expect(counted.n).toBeGreaterThan(0);
  });

  it("deletes a user's credentials and devices with the user", async () => {
    const userId = await addUser();
    const otherId = await addUser();
    for (const owner of [userId, otherId]) {
      await handle.db
        .insertInto('user_credentials')
        .values({
          id: id('cred'),
          user_id: owner,
          service_type: 'jira',
          kind: 'jwt',
          ciphertext: 'c',
          nonce: 'n',
          key_id: 'k1',
          metadata: json({ sub: owner }),
        })
        .execute();
      await handle.db
        .insertInto('devices')
        .values({ id: id('dev'), user_id: owner, platform: 'macos', push_token: 'p' })
        .execute();
    }
    await handle.db.deleteFrom('users').where('id', '=', userId).execute();

    const owners = async (table: 'user_credentials' | 'devices') =>
      (await handle.db.selectFrom(table).select('user_id').where('user_id', 'in', [userId, otherId]).execute()).map(
        (r) => r.user_id,
      );
    expect(await owners('user_credentials')).toEqual([otherId]);
    expect(await owners('devices')).toEqual([otherId]);
  });

  it('refuses a credential for a user that does not exist', async () => {
    await expect(
      handle.db
        .insertInto('user_credentials')
        .values({
          id: id('cred'),
          user_id: 'nobody',
          service_type: 'x',
          kind: 'basic',
          ciphertext: 'c',
          nonce: 'n',
          key_id: 'k1',
          metadata: json({}),
        })
        .execute(),
    ).rejects.toMatchObject({ code: '23503' }); // foreign_key_violation
  });
});
