import { EgressRefusedError, ValidationError } from '../errors.js';
import { classifyIp, inCidr, METADATA_HOSTNAMES, parseCidr, parseIp, type Cidr, type IpBytes } from './addresses.js';

/** `public-only` refuses every non-public address; `allow-private` only link-local and metadata. */
export type EgressMode = 'public-only' | 'allow-private';

/** What outbound connections may reach; built once from configuration and shared by every client. */
export interface EgressPolicy {
  mode: EgressMode;
  /** EGRESS_ALLOW address blocks: always reachable, link-local and metadata included. */
  allowCidrs: Cidr[];
  /** EGRESS_ALLOW host names (lower case, no trailing dot): any address they resolve to is reachable. */
  allowHosts: Set<string>;
}

/** The mode when EGRESS_POLICY is unset: strict in production, permissive for local development. */
export function defaultEgressMode(nodeEnv: string | undefined): EgressMode {
  return nodeEnv === 'production' ? 'public-only' : 'allow-private';
}

/** Splits EGRESS_ALLOW into blocks and host names; throws on an entry that is neither. */
export function parseEgressAllow(list: string | readonly string[] | undefined): { cidrs: Cidr[]; hosts: Set<string> } {
  const entries = (typeof list === 'string' ? list.split(',') : (list ?? [])).map((e) => e.trim()).filter(Boolean);
  const cidrs: Cidr[] = [];
  const hosts = new Set<string>();
  for (const entry of entries) {
    const cidr = parseCidr(entry);
    if (cidr) cidrs.push(cidr);
    else if (isHostName(entry)) hosts.add(normaliseHost(entry));
    else throw new Error(`"${entry}" is neither a CIDR block, an IP address nor a host name`);
  }
  return { cidrs, hosts };
}

/** Whether a string is a syntactically valid DNS host name (used to validate EGRESS_ALLOW). */
export function isHostName(text: string): boolean {
  return /^(?=.{1,253}\.?$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i.test(
    text,
  );
}

const normaliseHost = (host: string) =>
  host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');

/** Builds the policy from EGRESS_POLICY / EGRESS_ALLOW / NODE_ENV as loaded by loadConfig. */
export function egressPolicyFromConfig(config: {
  NODE_ENV?: string;
  EGRESS_POLICY?: EgressMode;
  EGRESS_ALLOW?: readonly string[];
}): EgressPolicy {
  const allow = parseEgressAllow(config.EGRESS_ALLOW);
  return {
    mode: config.EGRESS_POLICY ?? defaultEgressMode(config.NODE_ENV),
    allowCidrs: allow.cidrs,
    allowHosts: allow.hosts,
  };
}

/**
 * The same policy with extra host names always allowed: for endpoints the operator configured
 * (VAULT_URL, internal service URLs), which legitimately live on private addresses.
 */
export function withAllowedHosts(policy: EgressPolicy, hosts: readonly string[]): EgressPolicy {
  return { ...policy, allowHosts: new Set([...policy.allowHosts, ...hosts.map(normaliseHost)]) };
}

/** Whether the host name itself is listed in EGRESS_ALLOW (then resolution results are trusted). */
export function isHostAllowed(policy: EgressPolicy, host: string): boolean {
  return policy.allowHosts.has(normaliseHost(host));
}

/** Refuses a host name before resolution: metadata names, unless EGRESS_ALLOW lists them. */
export function checkHostName(policy: EgressPolicy, host: string): void {
  const name = normaliseHost(host);
  if (METADATA_HOSTNAMES.has(name) && !policy.allowHosts.has(name)) {
    throw new EgressRefusedError('metadata', 'the host name belongs to a cloud metadata service');
  }
}

/** Refuses one address the policy does not let through; `host` is the name it was resolved from. */
export function checkAddress(policy: EgressPolicy, host: string, address: string | IpBytes): void {
  if (isHostAllowed(policy, host)) return;
  const ip = typeof address === 'string' ? parseIp(address) : address;
  if (!ip) throw new EgressRefusedError('invalid-address', 'the host did not resolve to a valid address');
  if (policy.allowCidrs.some((c) => inCidr(ip, c))) return;
  const kind = classifyIp(ip);
  if (kind === 'metadata') throw new EgressRefusedError('metadata', 'the address belongs to a cloud metadata service');
  if (kind === 'link-local') throw new EgressRefusedError('link-local', 'link-local addresses are never reachable');
  if (kind === 'non-public' && policy.mode === 'public-only') {
    throw new EgressRefusedError(
      'private-address',
      'private, loopback and reserved addresses are refused (EGRESS_POLICY=public-only)',
    );
  }
}

/**
 * Write-time check of a URL an admin stores (agent upstream, provider endpoint): refuses a
 * metadata host name or a literal forbidden IP at once. Names are only resolved at connect
 * time, which is the real guarantee (a name may resolve differently later).
 */
export function assertUrlEgressAllowed(policy: EgressPolicy, url: string | URL): void {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  const host = normaliseHost(parsed.hostname);
  checkHostName(policy, host);
  if (parseIp(host)) checkAddress(policy, host, host);
}

/**
 * The write-time check as a 400 naming the field: for the catalog's agent `upstreamUrl` and
 * provider `endpoint` (and any other stored outbound URL). Connect time stays the guarantee.
 */
export function assertStoredUrlAllowed(policy: EgressPolicy, url: string, field: string): void {
  try {
    assertUrlEgressAllowed(policy, url);
  } catch (err) {
    if (err instanceof EgressRefusedError) {
      throw new ValidationError(`${field}: ${err.message}`, { field, issues: [{ field, message: err.message }] });
    }
    throw err;
  }
}
