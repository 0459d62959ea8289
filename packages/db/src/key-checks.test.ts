import { describe, expect, it } from 'vitest';
import { checkSealingKeys, KeyMismatchError } from './key-checks.js';
import { openTestDatabase, testBackends } from './testing.js';

const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);
const P = 'c3'.repeat(32);

describe.each(testBackends())('checkSealingKeys on %s', (backend) => {
  it('records the first keys, accepts them again, refuses others, and follows a rotation', async () => {
    const { db, close } = await openTestDatabase(backend);
    try {
      await checkSealingKeys(db, [{ name: 'CREDENTIAL_ENCRYPTION_KEY', current: A, previous: [] }]);
      await checkSealingKeys(db, [{ name: 'CREDENTIAL_ENCRYPTION_KEY', current: A, previous: [] }]);
      const refused = checkSealingKeys(db, [
        { name: 'CREDENTIAL_ENCRYPTION_KEY', current: B, previous: [] },
        { name: 'PLATFORM_SECRETS_KEY', current: P, previous: [] },
      ]);
      await expect(refused).rejects.toBeInstanceOf(KeyMismatchError);
      await expect(refused).rejects.toThrow(/^CREDENTIAL_ENCRYPTION_KEY does not open the data in this database/);
      // A rotation: the new key with the old one among the previous keys passes and becomes the check.
      await checkSealingKeys(db, [{ name: 'CREDENTIAL_ENCRYPTION_KEY', current: B, previous: [A] }]);
      await checkSealingKeys(db, [{ name: 'CREDENTIAL_ENCRYPTION_KEY', current: B, previous: [] }]);
      await expect(
        checkSealingKeys(db, [{ name: 'CREDENTIAL_ENCRYPTION_KEY', current: A, previous: [] }]),
      ).rejects.toThrow(KeyMismatchError);
      const rows = await db.selectFrom('key_checks').select(['name', 'digest']).orderBy('name').execute();
      expect(rows.map((r) => r.name)).toEqual(['CREDENTIAL_ENCRYPTION_KEY', 'PLATFORM_SECRETS_KEY']);
      for (const row of rows) expect(row.digest).not.toContain(A.slice(0, 8)); // an HMAC, not the key
    } finally {
      await close();
    }
  });
});
