import type { ApiKeyScope, RoleName } from '@agentgw/db';
import type { Permission } from './permissions.js';

/** Who is calling, however they proved it. Set by the auth middlewares as `c.var.principal`. */
export interface Principal {
  via: 'jwt' | 'api_key' | 'runtime_token' | 'session_token';
  /** Acting user: the JWT's user, X-User-Id with an API key, or a session token's end user. Null for a bare runtime token. */
  userId: string | null;
  email: string | null;
  roles: RoleName[];
  tenantId: string | null;
  /** Agent acting: the runtime token's agent, the session token's agent, or X-Agent-Id with an API key. */
  agentId: string | null;
  /** The real end user an agent acts for (session token); equals userId for direct user calls. */
  endUserId: string | null;
  apiKey: { id: string; scopes: ApiKeyScope[] } | null;
  permissions: ReadonlySet<Permission>;
}

declare module 'hono' {
  interface ContextVariableMap {
    principal: Principal;
  }
}
