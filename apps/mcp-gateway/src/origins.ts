/**
 * DNS-rebinding protection (MCP Streamable HTTP: servers MUST validate `Origin`). Requests
 * without `Origin` (servers, CLIs, SDK clients in Node) pass; a browser's `Origin` must be on
 * the allow list: MCP_ALLOWED_ORIGINS, else loopback origins and GATEWAY_PUBLIC_URL's origin.
 */
export interface OriginPolicy {
  allows(origin: string | undefined): boolean;
}

const LOOPBACK = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i;

/** The policy for a loaded configuration. */
export function createOriginPolicy(config: {
  MCP_ALLOWED_ORIGINS?: readonly string[];
  GATEWAY_PUBLIC_URL?: string;
}): OriginPolicy {
  const listed = config.MCP_ALLOWED_ORIGINS ?? [];
  const any = listed.includes('*');
  const allowed = new Set(listed.map((o) => o.toLowerCase().replace(/\/+$/, '')));
  const useDefaults = listed.length === 0;
  if (useDefaults && config.GATEWAY_PUBLIC_URL) allowed.add(new URL(config.GATEWAY_PUBLIC_URL).origin.toLowerCase());
  return {
    allows(origin) {
      if (origin === undefined) return true;
      if (any) return true;
      const normal = origin.toLowerCase();
      if (allowed.has(normal)) return true;
      return useDefaults && LOOPBACK.test(normal);
    },
  };
}
