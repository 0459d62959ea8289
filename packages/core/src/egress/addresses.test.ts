import { describe, expect, it } from 'vitest';
import { EgressRefusedError } from '../errors.js';
import { classifyIp, parseCidr, parseIp } from './addresses.js';
import {
  assertStoredUrlAllowed,
  assertUrlEgressAllowed,
  checkAddress,
  egressPolicyFromConfig,
  parseEgressAllow,
} from './policy.js';

const classify = (a: string) => classifyIp(parseIp(a)!);

describe('address classification', () => {
  it.each([
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['127.0.0.1', 'non-public'],
    ['127.255.0.9', 'non-public'],
    ['0.0.0.0', 'non-public'],
    ['10.1.2.3', 'non-public'],
    ['172.31.255.255', 'non-public'],
    ['192.168.0.1', 'non-public'],
    ['100.64.0.1', 'non-public'],
    ['::1', 'non-public'],
    ['::', 'non-public'],
    ['fd12:3456::1', 'non-public'],
    ['ff02::1', 'non-public'],
    // IPv4 addresses hidden in IPv6 are judged as the IPv4 address they carry.
    ['::ffff:127.0.0.1', 'non-public'],
    ['::ffff:7f00:1', 'non-public'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['::127.0.0.1', 'non-public'],
    ['[::ffff:10.0.0.1]', 'non-public'],
  ])('%s is %s', (address, expected) => {
    expect(classify(address)).toBe(expected);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '100.128.0.1'])(
    '%s is public',
    (address) => {
      expect(classify(address)).toBeUndefined();
    },
  );

  it('parses CIDR blocks and refuses garbage', () => {
    expect(parseCidr('10.0.0.0/8')).toMatchObject({ family: 4, prefix: 8 });
    expect(parseCidr('fd00::/8')).toMatchObject({ family: 6, prefix: 8 });
    expect(parseCidr('10.0.0.1')).toMatchObject({ prefix: 32 });
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('10.0.0.0/x')).toBeUndefined();
    expect(parseCidr('example.com')).toBeUndefined();
  });
});

describe('policy decisions', () => {
  const refusal = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      return err instanceof EgressRefusedError ? err.reason : 'other';
    }
    return undefined;
  };

  it('allow-private lets private addresses through but never link-local or metadata', () => {
    const policy = egressPolicyFromConfig({ EGRESS_POLICY: 'allow-private' });
    expect(refusal(() => checkAddress(policy, 'x', '127.0.0.1'))).toBeUndefined();
    expect(refusal(() => checkAddress(policy, 'x', '10.0.0.5'))).toBeUndefined();
    expect(refusal(() => checkAddress(policy, 'x', '169.254.169.254'))).toBe('metadata');
    expect(refusal(() => checkAddress(policy, 'x', 'fe80::2'))).toBe('link-local');
  });

  it('public-only refuses loopback, private, CGNAT and unique-local', () => {
    const policy = egressPolicyFromConfig({ EGRESS_POLICY: 'public-only' });
    for (const a of ['127.0.0.1', '10.0.0.5', '100.64.1.1', 'fd00::1', '::ffff:192.168.1.1', '0.0.0.0']) {
      expect(refusal(() => checkAddress(policy, 'x', a))).toBe('private-address');
    }
    expect(refusal(() => checkAddress(policy, 'x', '8.8.8.8'))).toBeUndefined();
  });

  it('defaults to public-only in production only', () => {
    expect(egressPolicyFromConfig({ NODE_ENV: 'production' }).mode).toBe('public-only');
    expect(egressPolicyFromConfig({ NODE_ENV: 'development' }).mode).toBe('allow-private');
    expect(egressPolicyFromConfig({ NODE_ENV: 'production', EGRESS_POLICY: 'allow-private' }).mode).toBe(
      'allow-private',
    );
  });

  it('EGRESS_ALLOW lets listed blocks and host names through, metadata included', () => {
    const policy = egressPolicyFromConfig({
      EGRESS_POLICY: 'public-only',
      EGRESS_ALLOW: ['10.1.0.0/16', '169.254.169.254', 'Vault.Internal.'],
    });
    expect(refusal(() => checkAddress(policy, 'x', '10.1.2.3'))).toBeUndefined();
    expect(refusal(() => checkAddress(policy, 'x', '10.2.0.1'))).toBe('private-address');
    expect(refusal(() => checkAddress(policy, 'x', '169.254.169.254'))).toBeUndefined();
    expect(refusal(() => checkAddress(policy, 'vault.internal', '192.168.9.9'))).toBeUndefined();
    expect(() => parseEgressAllow('10.0.0.0/99')).toThrow(/neither/);
  });

  it('refuses forbidden literal addresses and metadata names in stored URLs', () => {
    const policy = egressPolicyFromConfig({ EGRESS_POLICY: 'allow-private' });
    expect(refusal(() => assertUrlEgressAllowed(policy, 'http://169.254.169.254/latest/meta-data'))).toBe('metadata');
    expect(refusal(() => assertUrlEgressAllowed(policy, 'http://[::ffff:169.254.169.254]/'))).toBe('metadata');
    expect(refusal(() => assertUrlEgressAllowed(policy, 'http://metadata.google.internal./computeMetadata/v1/'))).toBe(
      'metadata',
    );
    expect(refusal(() => assertUrlEgressAllowed(policy, 'http://127.0.0.1:8080/'))).toBeUndefined();
    expect(refusal(() => assertUrlEgressAllowed(policy, 'https://agents.example.com/run'))).toBeUndefined();
    const strict = egressPolicyFromConfig({ EGRESS_POLICY: 'public-only' });
    // WHATWG URL parsing turns these spellings of loopback into 127.0.0.1.
    for (const url of ['http://127.1/', 'http://0x7f000001/', 'http://2130706433/', 'http://[::1]/']) {
      expect(refusal(() => assertUrlEgressAllowed(strict, url))).toBe('private-address');
    }
  });

  it('answers a stored URL the policy refuses with a 400 naming the field', () => {
    const policy = egressPolicyFromConfig({ EGRESS_POLICY: 'allow-private' });
    expect(() => assertStoredUrlAllowed(policy, 'http://169.254.169.254/', 'upstreamUrl')).toThrow(
      expect.objectContaining({
        status: 400,
        code: 'VALIDATION_ERROR',
        details: expect.objectContaining({ field: 'upstreamUrl' }),
      }),
    );
    expect(() => assertStoredUrlAllowed(policy, 'http://10.0.0.1/', 'endpoint')).not.toThrow();
  });
});
