import type { Viewer } from '@agentgw/confirmations';

/** The dashboard users the event-stream tests open streams for: plain users, tenant admins, a tenantless tenant admin, the admin and an agent creator. */
export const viewers = {
  alice: { userId: 'alice', roles: [], tenantId: 'acme' },
  bob: { userId: 'bob', roles: [], tenantId: 'acme' },
  carol: { userId: 'carol', roles: [], tenantId: 'globex' },
  acmeAdmin: { userId: 'acme-admin', roles: ['tenant_admin'], tenantId: 'acme' },
  globexAdmin: { userId: 'globex-admin', roles: ['tenant_admin'], tenantId: 'globex' },
  tenantlessTenantAdmin: { userId: 'tta', roles: ['tenant_admin'], tenantId: null },
  admin: { userId: 'root', roles: ['admin'], tenantId: null },
  creator: { userId: 'creator', roles: ['agent_creator'], tenantId: 'acme' },
} satisfies Record<string, Viewer>;

/** Everything already enqueued on a stream, as text (stops at the first read that does not come at once). */
export async function drain(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = '';
  for (;;) {
    const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 20))]);
    if (next === null || next.done) break;
    text += new TextDecoder().decode(next.value);
  }
  reader.releaseLock();
  return text;
}
