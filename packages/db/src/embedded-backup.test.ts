import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './connection.js';
import { backupEmbeddedDatabase, restoreEmbeddedDatabase } from './embedded-backup.js';
import { DatabaseLockedError } from './file-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'agentgw-backup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('backup and restore of the embedded database', () => {
  it('round-trips the data; refuses a database in use, an existing archive and restoring over a database', async () => {
    const original = join(dir, 'original');
    const handle = await openDatabase({ url: `file:${original}` });
    await sql`CREATE TABLE kept (id int PRIMARY KEY, note text)`.execute(handle.db);
    await sql`INSERT INTO kept VALUES (1, 'before the backup')`.execute(handle.db);
    const archive = join(dir, 'backup.tar.gz');
    // The gateway has it open: the lock's error names that process.
    await expect(backupEmbeddedDatabase(original, archive)).rejects.toBeInstanceOf(DatabaseLockedError);
    await handle.close();

    const { bytes } = await backupEmbeddedDatabase(original, archive);
    expect(bytes).toBe(statSync(archive).size);
    expect(statSync(archive).mode & 0o777).toBe(0o600);
    await expect(backupEmbeddedDatabase(original, archive)).rejects.toThrow(/EEXIST/);

    const restored = join(dir, 'restored');
    await restoreEmbeddedDatabase(archive, restored);
    const reopened = await openDatabase({ url: `file:${restored}` });
    try {
      const { rows } = await sql<{ note: string }>`SELECT note FROM kept WHERE id = 1`.execute(reopened.db);
      expect(rows).toEqual([{ note: 'before the backup' }]);
    } finally {
      await reopened.close();
    }
    await expect(restoreEmbeddedDatabase(archive, restored)).rejects.toThrow(/already holds a database/);
  });

  it('says so when there is nothing to back up, and refuses an archive that is not one', async () => {
    await expect(backupEmbeddedDatabase(join(dir, 'none'), join(dir, 'none.tar.gz'))).rejects.toThrow(
      /There is no embedded database/,
    );
    const bogus = join(dir, 'bogus.tar.gz');
    writeFileSync(bogus, 'not an archive');
    await expect(restoreEmbeddedDatabase(bogus, join(dir, 'from-bogus'))).rejects.toThrow();
  });
});
