import { describe, expect, it } from 'vitest';
import { encodeParamValue, paramHeaderMismatch, paramHeadersFor, paramHeadersOf } from './param-headers.js';

const tool = (properties: Record<string, unknown>) => ({ name: 't', inputSchema: { type: 'object', properties } });

describe('x-mcp-header annotations', () => {
  it('finds annotations reachable through properties only, on string, integer and boolean properties', () => {
    const specs = paramHeadersOf(
      tool({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        opts: { type: 'object', properties: { n: { type: 'integer', 'x-mcp-header': 'N' } } },
      }),
    );
    expect(specs).toEqual([
      { header: 'mcp-param-region', path: ['region'] },
      { header: 'mcp-param-n', path: ['opts', 'n'] },
    ]);
  });

  it('yields none for an invalid annotation: number type, a non-token name, a case-insensitive duplicate', () => {
    expect(paramHeadersOf(tool({ x: { type: 'number', 'x-mcp-header': 'X' } }))).toEqual([]);
    expect(paramHeadersOf(tool({ x: { type: 'string', 'x-mcp-header': 'a b' } }))).toEqual([]);
    expect(
      paramHeadersOf(tool({ x: { type: 'string', 'x-mcp-header': 'A' }, y: { type: 'string', 'x-mcp-header': 'a' } })),
    ).toEqual([]);
  });
});

describe('values and their headers', () => {
  it('encodes strings as they are, integers and booleans as text, anything unsafe in the Base64 sentinel', () => {
    expect(encodeParamValue('us-west1')).toBe('us-west1');
    expect(encodeParamValue(42)).toBe('42');
    expect(encodeParamValue(false)).toBe('false');
    expect(encodeParamValue(' padded ')).toBe('=?base64?IHBhZGRlZCA=?=');
    expect(encodeParamValue('line1\nline2')).toBe('=?base64?bGluZTEKbGluZTI=?=');
    expect(encodeParamValue('=?base64?literal?=')).toBe('=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
    expect(encodeParamValue(1.5)).toBeNull();
  });

  it('emits headers for the values present and checks the client’s against the body', () => {
    const specs = paramHeadersOf(tool({ region: { type: 'string', 'x-mcp-header': 'Region' } }));
    expect(paramHeadersFor(specs, { region: 'Hello, 世界' })).toEqual({
      'mcp-param-region': '=?base64?SGVsbG8sIOS4lueVjA==?=',
    });
    expect(paramHeadersFor(specs, { region: null })).toBeNull();
    const headers = (value: string | null) => new Headers(value === null ? {} : { 'Mcp-Param-Region': value });
    expect(paramHeaderMismatch(specs, { region: 'Hello' }, headers('=?base64?SGVsbG8=?='))).toBeNull();
    expect(paramHeaderMismatch(specs, { region: 'SGVsbG8=' }, headers('SGVsbG8='))).toBeNull();
    expect(paramHeaderMismatch(specs, {}, headers(null))).toBeNull();
    expect(paramHeaderMismatch(specs, { region: 'Hello' }, headers('=?base64?SGVsbG8?='))).toMatch(/does not match/);
    expect(paramHeaderMismatch(specs, { region: 'Hello' }, headers(null))).toMatch(/required/);
    expect(paramHeaderMismatch(specs, {}, headers('x'))).toMatch(/does not match/);
  });
});
