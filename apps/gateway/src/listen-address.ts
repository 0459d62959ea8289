import { isIP } from 'node:net';

/** The all-in-one's listening address when HOST is unset: loopback, so a first start is not open to the network. */
export const DEFAULT_HOST = '127.0.0.1';

/** Whether only this machine can reach `host` (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'));
}

/** `host:port` as it goes into a URL (IPv6 in brackets). */
const hostPort = (host: string, port: number): string => (isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`);

/**
 * Where MCP clients sign in (the authorization server's issuer): GATEWAY_PUBLIC_URL when given;
 * on a loopback address with a fixed port, the only URL clients can reach it at; otherwise
 * (every interface, a proxy in front, a port chosen at start) it cannot be known, and sign-in stays off.
 */
export type PublicUrl =
  { kind: 'configured'; url: string } | { kind: 'derived'; url: string } | { kind: 'unknown'; reason: string };

/** The public URL the all-in-one runs with, from GATEWAY_PUBLIC_URL or the listening address. */
export function publicUrlOf(configured: string | undefined, listen: { host: string; port: number }): PublicUrl {
  if (configured) return { kind: 'configured', url: configured };
  if (listen.port === 0) return { kind: 'unknown', reason: 'the port is chosen at start (--port 0)' };
  if (!isLoopbackHost(listen.host)) {
    return { kind: 'unknown', reason: `${listen.host} is not a loopback address, so the URL clients use is unknown` };
  }
  return { kind: 'derived', url: `http://${hostPort(listen.host, listen.port)}` };
}

/** What the start banner says about the address, MCP client sign-in and self-registration, one line each. */
export function startBanner(state: {
  host: string;
  port: number;
  publicUrl: PublicUrl;
  selfRegistration: boolean;
}): string[] {
  const { host, port, publicUrl } = state;
  const loopback = isLoopbackHost(host);
  const url = `http://${hostPort(loopback ? host : '127.0.0.1', port)}`;
  const reach = loopback
    ? `loopback only (${host}); set HOST=0.0.0.0 to listen on every interface`
    : `on ${host === '0.0.0.0' || host === '::' ? 'every interface' : host}, port ${port}`;
  const signIn =
    publicUrl.kind === 'unknown'
      ? `MCP client sign-in (OAuth): off, ${publicUrl.reason}; set GATEWAY_PUBLIC_URL to the URL clients reach this gateway at`
      : `MCP client sign-in (OAuth): on, issuer ${publicUrl.url}${publicUrl.kind === 'derived' ? ' (derived from the loopback address; set GATEWAY_PUBLIC_URL behind a proxy)' : ' (GATEWAY_PUBLIC_URL)'}`;
  const registration = state.selfRegistration
    ? `Self-registration: on, anyone who reaches ${loopback ? 'this machine' : 'this address'} may create an account (ALLOW_SELF_REGISTRATION=false turns it off)`
    : 'Self-registration: off (ALLOW_SELF_REGISTRATION=true turns it on)';
  return [
    `Agent Gateway listening on ${url} (${reach})`,
    `  MCP endpoint: ${publicUrl.kind === 'unknown' ? url : publicUrl.url}/api/v1/mcp/mcp`,
    `  ${signIn}`,
    `  ${registration}`,
  ];
}
