import { describe, expect, it } from 'vitest';
import {
  MASK,
  MAX_BODY_BYTES,
  MAX_DEPTH,
  MAX_ERROR_CHARS,
  capError,
  isSecretName,
  maskBody,
  maskBodySized,
  type TruncatedBody,
} from './masking.js';

describe('isSecretName', () => {
  it.each([
    'password',
    'Password',
    'db_password',
    'passwd',
    'passphrase',
    'clientSecret',
    'client-secret',
    'token',
    'access_token',
    'refreshToken',
    'apiKey',
    'api_key',
    'X-API-Key',
    'APIKEY',
    'aws_access_key_id',
    'Authorization',
    'proxy-authorization',
    'credentials',
    'private_key',
    'privateKey',
    'Cookie',
    'set-cookie',
    'sessionId',
    'session_id',
    'signature',
  ])('treats %s as secret', (name) => expect(isSecretName(name)).toBe(true));

  it.each(['path', 'query', 'user', 'name', 'keyword', 'author', 'session', 'id'])('leaves %s alone', (name) =>
    expect(isSecretName(name)).toBe(false),
  );
});

describe('maskBody', () => {
  it('masks secret-named fields at any depth, in arrays too, whatever their value', () => {
    const body = {
      path: '/etc/hosts',
      password: 'hunter2',
      nested: { headers: { Authorization: 'Bearer abc', accept: 'json' }, list: [{ api_key: 'k1', n: 1 }] },
      token: { kind: 'object', value: 'x' },
    };
    expect(maskBody(body)).toEqual({
      path: '/etc/hosts',
      password: MASK,
      nested: { headers: { Authorization: MASK, accept: 'json' }, list: [{ api_key: MASK, n: 1 }] },
      token: MASK,
    });
    expect(JSON.stringify(maskBody(body))).not.toMatch(/hunter2|abc|k1/);
  });

  it('does not change its input', () => {
    const body = { password: 'p' };
    maskBody(body);
    expect(body.password).toBe('p');
  });

  it('keeps a body at the cap and replaces one over it by a marker with its size', () => {
    // {"s":"…"} is 8 bytes around the string.
    const atCap = { s: 'a'.repeat(MAX_BODY_BYTES - 8) };
    expect(maskBody(atCap)).toEqual(atCap);
    const over = { s: 'a'.repeat(MAX_BODY_BYTES - 7) };
    expect(maskBody(over)).toEqual({ $truncated: { originalBytes: MAX_BODY_BYTES + 1 } });
    // Multi-byte characters count in UTF-8 bytes.
    expect(maskBody('é'.repeat(MAX_BODY_BYTES))).toEqual({ $truncated: { originalBytes: 2 * MAX_BODY_BYTES + 2 } });
  });

  it('measures the cap after masking, so a large secret does not make the body truncated', () => {
    expect(maskBody({ token: 'x'.repeat(MAX_BODY_BYTES * 2), q: 1 })).toEqual({ token: MASK, q: 1 });
  });

  it('turns hostile values into storable JSON', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    let deep: unknown = 'bottom';
    for (let i = 0; i < MAX_DEPTH + 5; i++) deep = [deep];
    const out = maskBody({
      cyclic,
      big: 12345678901234567890n,
      when: new Date(Date.UTC(2026, 0, 2)),
      nul: 'a\u0000b',
      lone: 'x\uD800y',
      pair: '\uD83D\uDE00',
      fn: () => 1,
      nan: Number.NaN,
      undef: undefined,
      arr: [undefined, 1],
      deep,
    }) as Record<string, unknown>;
    expect(out.cyclic).toEqual({ a: 1, self: '[circular]' });
    expect(out.big).toBe('12345678901234567890');
    expect(out.when).toBe('2026-01-02T00:00:00.000Z');
    expect(out.nul).toBe('a\uFFFDb');
    expect(out.lone).toBe('x\uFFFDy');
    expect(out.pair).toBe('\uD83D\uDE00');
    expect('fn' in out).toBe(false);
    expect(out.nan).toBeNull();
    expect('undef' in out).toBe(false);
    expect(out.arr).toEqual([null, 1]);
    expect(JSON.stringify(out.deep)).toContain('[too deep]');
    expect(maskBody(undefined)).toBeNull();
  });

  it('repeats the same object in siblings without calling it circular', () => {
    const shared = { v: 1 };
    expect(maskBody({ a: shared, b: shared })).toEqual({ a: { v: 1 }, b: { v: 1 } });
  });
});

describe('maskBodySized', () => {
  it("reports at least the UTF-8 size of the JSON it keeps, and the marker's size for a truncated body", () => {
    for (const value of [
      { a: 1 },
      { text: 'é€😀'.repeat(1_000) },
      { text: 'é'.repeat(5_000) },
      { text: 'x'.repeat(MAX_BODY_BYTES - 20) },
    ]) {
      const { body, maxBytes } = maskBodySized(value);
      expect(body).toEqual(maskBody(value));
      expect(maxBytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(body), 'utf8'));
    }
    const { body, maxBytes } = maskBodySized({ text: 'x'.repeat(MAX_BODY_BYTES) });
    expect(body).toHaveProperty('$truncated');
    expect(maxBytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(body), 'utf8'));
  });

  it('bounds the JSON of hostile bodies from above, and truncates exactly those over the limit', () => {
    // A fixed pseudo-random sequence: the same bodies every run.
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const texts = ['plain', 'a "quoted" \\ path', '\u0000\u001f\n\t', 'é€', '😀', '\uD800 lone', '</script>', ''];
    const leaves: readonly unknown[] = [
      -1.2345678901234567e-308,
      1e21,
      -0,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      12345678901234567890n,
      new Date(0),
      undefined,
      () => 1,
      Symbol('s'),
      true,
      null,
    ];
    const keys = ['id', 'token', 'a"b', 'k\u0000', 'ключ', 'apiKey', 'text'];
    const build = (depth: number): unknown => {
      const roll = next();
      if (depth > 5 || roll < 0.3) return pick(leaves);
      if (roll < 0.55) return pick(texts).repeat(1 + Math.floor(next() * 400));
      if (roll < 0.75) return Array.from({ length: Math.floor(next() * 6) }, () => build(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 6) }, () => [pick(keys) + Math.floor(next() * 9), build(depth + 1)]),
      );
    };
    let truncated = 0;
    for (let i = 0; i < 400; i++) {
      const value = build(0);
      const { body, maxBytes } = maskBodySized(value);
      const bytes = Buffer.byteLength(JSON.stringify(body), 'utf8');
      expect(maxBytes).toBeGreaterThanOrEqual(bytes);
      const marker = (body as Partial<TruncatedBody> | null)?.$truncated;
      if (marker !== undefined) {
        truncated++;
        expect(marker.originalBytes).toBeGreaterThan(MAX_BODY_BYTES);
      } else expect(bytes).toBeLessThanOrEqual(MAX_BODY_BYTES);
    }
    expect(truncated).toBeGreaterThan(0);
  });

  it('counts a safe integer at its exact size, so a long array of them is bounded tightly', () => {
    for (const n of [0, -0, 7, -7, 10, 99, -100, 2 ** 31, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      // An array is counted with a comma after every item: one byte over for the last.
      expect(maskBodySized([n]).maxBytes).toBe(Buffer.byteLength(JSON.stringify([n])) + 1);
    }
    // 3,000 ids: 13.9 KB as written, under the cap; 75 KB if every number counted as the longest one.
    const ids = Array.from({ length: 3_000 }, (_, i) => i);
    const { body, maxBytes } = maskBodySized({ ids });
    const written = Buffer.byteLength(JSON.stringify({ ids }));
    expect(maxBytes).toBeGreaterThanOrEqual(written);
    expect(maxBytes).toBeLessThanOrEqual(written + 2);
    expect(body).toEqual({ ids });
    // Beyond the safe range, and fractions, keep the general bound.
    for (const n of [2 ** 53, 1e21, 0.1, -1.5e-7]) {
      expect(maskBodySized([n]).maxBytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify([n])));
    }
  });

  it('answers a field name the same however often it is asked', () => {
    for (let i = 0; i < 3; i++) {
      expect(maskBodySized({ apiKey: 'k', text: 't' }).body).toEqual({ apiKey: MASK, text: 't' });
      expect(isSecretName('X-API-Key')).toBe(true);
      // A remembered name keeps its cleaned form, a secret one its mask.
      expect(maskBodySized({ 'k\u0000ey': 1, 'pass\u0000word': 'p' }).body).toEqual({
        'k\uFFFDey': 1,
        'pass\uFFFDword': MASK,
      });
    }
  });
});

describe('capError', () => {
  it('keeps short errors and cuts long ones with a note of their length', () => {
    expect(capError('boom')).toBe('boom');
    expect(capError(null)).toBeNull();
    expect(capError(undefined)).toBeUndefined();
    const long = capError('e'.repeat(MAX_ERROR_CHARS + 10))!;
    expect(long.startsWith('e'.repeat(MAX_ERROR_CHARS))).toBe(true);
    expect(long).toContain(`[truncated, ${MAX_ERROR_CHARS + 10} characters]`);
    expect(long.length).toBeLessThan(MAX_ERROR_CHARS + 60);
  });
});
