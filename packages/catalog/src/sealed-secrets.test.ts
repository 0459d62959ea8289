import type { SecretBox } from '@agentgw/auth';
import { AppError, silentLogger, MemoryEventBus, systemClock } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { CatalogContext } from './catalog-context.js';
import { OpenedSecrets } from './sealed-secrets.js';

interface Row {
  id: string;
  sealed: string | null;
}

/** A context whose secret box counts what it opens; `bad` is a value no key opens. */
function countingContext(): { ctx: CatalogContext; opened: string[] } {
  const opened: string[] = [];
  const secrets = {
    open: (sealed: string, ownerId: string) => {
      opened.push(`${ownerId}:${sealed}`);
      return sealed === 'bad' ? null : `plain-${sealed}`;
    },
  } as unknown as SecretBox;
  return {
    ctx: { db: {} as Kysely<Database>, bus: new MemoryEventBus(), clock: systemClock, logger: silentLogger(), secrets },
    opened,
  };
}

describe('OpenedSecrets', () => {
  it('opens a record’s secret once, and again only for the record that replaces it', () => {
    const { ctx, opened } = countingContext();
    const secrets = new OpenedSecrets<Row>(ctx, 'provider', (row) => ({ id: row.id, sealed: row.sealed }));
    const record: Row = { id: 'p1', sealed: 's1' };
    for (let i = 0; i < 3; i += 1) expect(secrets.of(record)).toBe('plain-s1');
    expect(opened).toEqual(['p1:s1']);
    // A providers.changed reload makes a new record: its (maybe rotated) secret is opened anew.
    expect(secrets.of({ id: 'p1', sealed: 's2' })).toBe('plain-s2');
    expect(opened).toEqual(['p1:s1', 'p1:s2']);
  });

  it('answers null without opening when nothing is stored, and 503 every time for a secret no key opens', () => {
    const { ctx, opened } = countingContext();
    const secrets = new OpenedSecrets<Row>(ctx, 'agent', (row) => ({ id: row.id, sealed: row.sealed }));
    expect(secrets.of({ id: 'a1', sealed: null })).toBeNull();
    expect(opened).toEqual([]);
    const broken: Row = { id: 'a2', sealed: 'bad' };
    for (let i = 0; i < 2; i += 1) {
      const err = (() => {
        try {
          secrets.of(broken);
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ status: 503, message: expect.not.stringContaining('bad') });
    }
    expect(opened).toEqual(['a2:bad', 'a2:bad']);
  });
});
