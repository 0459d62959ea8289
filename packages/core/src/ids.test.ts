import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { newTimeOrderedId } from './ids.js';

describe('newTimeOrderedId', () => {
  it('is a UUIDv7 whose first 48 bits are the time in milliseconds', () => {
    const at = Date.UTC(2026, 10, 30, 12, 0, 0, 123);
    const id = newTimeOrderedId(at);
    expect(z.uuid({ version: 'v7' }).safeParse(id).success).toBe(true);
    expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
  });

  it('sorts by creation time across milliseconds, as text', () => {
    const ids = [3, 1, 2, 1000, 999].map((ms) => newTimeOrderedId(1_700_000_000_000 + ms));
    const byTime = [1, 2, 3, 999, 1000].map((ms) => newTimeOrderedId(1_700_000_000_000 + ms));
    expect([...ids].sort().map((id) => id.slice(0, 13))).toEqual(byTime.map((id) => id.slice(0, 13)));
  });

  it('keeps ids of the same millisecond distinct', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newTimeOrderedId(1_700_000_000_000)));
    expect(ids.size).toBe(1000);
  });
});
