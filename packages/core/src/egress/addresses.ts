import { isIP } from 'node:net';

/** An IP address as bytes (4 or 16), the form every range check works on. */
export interface IpBytes {
  family: 4 | 6;
  bytes: number[];
}

/** Parses an IPv4/IPv6 literal (zone ids and brackets allowed); undefined when it is none. */
export function parseIp(input: string): IpBytes | undefined {
  let text = input.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const family = isIP(text);
  if (family === 4) return { family: 4, bytes: text.split('.').map(Number) };
  if (family !== 6) return undefined;
  return { family: 6, bytes: ipv6Bytes(text) };
}

function ipv6Bytes(text: string): number[] {
  let hex = text;
  // A trailing dotted quad (::ffff:1.2.3.4) is two more hex groups.
  const lastColon = hex.lastIndexOf(':');
  const quad = hex.slice(lastColon + 1);
  if (quad.includes('.')) {
    const [a, b, c, d] = quad.split('.').map(Number) as [number, number, number, number];
    hex = `${hex.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const gap = hex.indexOf('::');
  const groups =
    gap < 0
      ? groupsOf(hex)
      : (() => {
          const left = groupsOf(hex.slice(0, gap));
          const right = groupsOf(hex.slice(gap + 2));
          return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
        })();
  const bytes: number[] = [];
  for (const g of groups) bytes.push(g >> 8, g & 0xff);
  return bytes;
}

/**
 * The IPv4 address an IPv6 one stands for, when it embeds one: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d). Checking that address closes the
 * bypass where `::ffff:127.0.0.1` reaches loopback while looking like IPv6.
 */
export function embeddedIpv4(ip: IpBytes): IpBytes | undefined {
  if (ip.family !== 6) return undefined;
  const b = ip.bytes;
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const last4 = { family: 4 as const, bytes: b.slice(12) };
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return last4;
  if (zeros(0, 12) && !zeros(12, 16) && !(zeros(12, 15) && b[15] === 1)) return last4;
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return last4;
  return undefined;
}

/** An address block such as 10.0.0.0/8 or fc00::/7. */
export interface Cidr {
  family: 4 | 6;
  bytes: number[];
  prefix: number;
}

/** Parses `a.b.c.d/n`, `x::/n`, or a bare address (a /32 or /128). */
export function parseCidr(text: string): Cidr | undefined {
  const [addr, prefixText, extra] = text.trim().split('/');
  if (extra !== undefined || addr === undefined) return undefined;
  const ip = parseIp(addr);
  if (!ip) return undefined;
  const max = ip.family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return undefined;
  return { ...ip, prefix };
}

/** Whether `ip` lies in `cidr` (same family only; callers unwrap mapped addresses first). */
export function inCidr(ip: IpBytes, cidr: Cidr): boolean {
  if (ip.family !== cidr.family) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((ip.bytes[i] ?? 0) & mask) !== ((cidr.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

const blocks = (list: string[]): Cidr[] => list.map((c) => parseCidr(c)!);

/** Link-local: never reachable under any policy unless EGRESS_ALLOW lists it (metadata lives here). */
export const LINK_LOCAL = blocks(['169.254.0.0/16', 'fe80::/10']);

/**
 * Cloud metadata endpoints: the common 169.254.169.254, AWS IMDS over IPv6, Alibaba (in CGNAT space),
 * Azure's wire server and Oracle's IMDS mirror. Refused under every policy unless allowed.
 */
export const METADATA_ADDRESSES = blocks([
  '169.254.169.254/32',
  'fd00:ec2::254/128',
  '100.100.100.200/32',
  '168.63.129.16/32',
  '192.0.0.192/32',
]);

/** Host names of metadata services, refused before any resolution under every policy. */
export const METADATA_HOSTNAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.packet.net',
]);

/** Not the public internet: refused under EGRESS_POLICY=public-only. */
export const NON_PUBLIC = blocks([
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on Linux
  '10.0.0.0/8',
  '100.64.0.0/10', // CGNAT
  '127.0.0.0/8',
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24',
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16',
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved and broadcast
  '::/128',
  '::1/128',
  '100::/64', // discard
  '2001:db8::/32',
  '2002::/16', // 6to4: embeds an IPv4 address we cannot vouch for
  'fc00::/7', // unique local
  'fec0::/10', // deprecated site-local
  'ff00::/8', // multicast
]);

/** Why an address is refused, or undefined when it is public. */
export type AddressClass = 'link-local' | 'metadata' | 'non-public';

/** Classifies an address; embedded IPv4 addresses are judged as the IPv4 address they carry. */
export function classifyIp(ip: IpBytes): AddressClass | undefined {
  const v4 = embeddedIpv4(ip);
  if (v4) return classifyIp(v4);
  if (METADATA_ADDRESSES.some((c) => inCidr(ip, c))) return 'metadata';
  if (LINK_LOCAL.some((c) => inCidr(ip, c))) return 'link-local';
  if (NON_PUBLIC.some((c) => inCidr(ip, c))) return 'non-public';
  return undefined;
}
