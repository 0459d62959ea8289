import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword, verifyPasswordOrDummy } from './passwords.js';

describe('passwords', () => {
  it('hashes with a random salt and verifies', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('never matches a malformed or hostile hash', async () => {
    const good = await hashPassword('pw-123456');
    const [, , r, p, salt, key] = good.split('$');
    expect(await verifyPassword('pw-123456', 'plaintext')).toBe(false);
    expect(await verifyPassword('pw-123456', good.slice(0, -4))).toBe(false);
    // Absurd cost parameters are refused instead of burning memory.
    expect(await verifyPassword('pw-123456', ['scrypt', 2 ** 30, r, p, salt, key].join('$'))).toBe(false);
  });

  it('runs a dummy verification for unknown users and returns false', async () => {
    expect(await verifyPasswordOrDummy('anything', null)).toBe(false);
    expect(await verifyPasswordOrDummy('anything', undefined)).toBe(false);
    const hash = await hashPassword('anything');
    expect(await verifyPasswordOrDummy('anything', hash)).toBe(true);
  });
});
