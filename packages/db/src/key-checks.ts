import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** A sealing key as the process holds it: the current one and those still readable during a rotation. */
export interface HeldKey {
  name: 'CREDENTIAL_ENCRYPTION_KEY' | 'PLATFORM_SECRETS_KEY';
  current: string;
  previous: readonly string[];
}

/** The key a process holds is not the one the stored data was sealed with. */
export class KeyMismatchError extends Error {
  constructor(readonly keys: readonly HeldKey['name'][]) {
    super(
      `${keys.join(' and ')} ${keys.length === 1 ? 'does' : 'do'} not open the data in this database: it was written ` +
        "under another key. Start with the key it was written with (the data directory's secrets.json, or the .env / " +
        'environment it ran with); to change keys, add the old one to *_PREVIOUS_KEYS and run reencrypt.',
    );
    this.name = 'KeyMismatchError';
  }
}

const digestOf = (key: string): string => createHmac('sha256', key).update('agentgw key check v1').digest('hex');
const same = (a: string, b: string): boolean => timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Refuses keys that do not open the stored data: the first start records each key's check; a
 * later start passes when its current key, or one of its previous keys (a rotation under way),
 * matches, and then records the current one.
 */
export async function checkSealingKeys(db: Kysely<Database>, keys: readonly HeldKey[]): Promise<void> {
  const wrong: HeldKey['name'][] = [];
  for (const key of keys) {
    const current = digestOf(key.current);
    await db
      .insertInto('key_checks')
      .values({ name: key.name, digest: current })
      .onConflict((c) => c.doNothing())
      .execute();
    const { digest } = await db
      .selectFrom('key_checks')
      .select('digest')
      .where('name', '=', key.name)
      .executeTakeFirstOrThrow();
    if (same(digest, current)) continue;
    if (!key.previous.some((old) => same(digest, digestOf(old)))) {
      wrong.push(key.name);
      continue;
    }
    await db
      .updateTable('key_checks')
      .set({ digest: current, updated_at: new Date() })
      .where('name', '=', key.name)
      .execute();
  }
  if (wrong.length > 0) throw new KeyMismatchError(wrong);
}
