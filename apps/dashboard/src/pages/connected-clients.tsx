import { useState } from 'react';
import { ConfirmButton } from '../components/confirm-button.js';
import { DataTable } from '../components/data-table.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { SelectField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { hasRole } from '../navigation.js';
import { useSession, useUser } from '../session.js';
import { useAction, useResource } from '../use-resource.js';

/** One MCP client a user connected with OAuth (GET /oauth/connections). */
interface Connection {
  grantId: string;
  userId: string;
  clientId: string;
  clientName: string | null;
  resources: string[];
  createdAt: string;
}

/**
 * The MCP clients that signed in as a user through OAuth: each with the endpoints it may call
 * and when it was connected, revocable at once (its tokens stop working on every replica).
 * Everyone sees their own; user managers pick any user they manage.
 */
export function ConnectedClientsPage() {
  const me = useUser();
  const manager = hasRole(me, 'admin');
  const [userId, setUserId] = useState(me.id);
  const users = useResource<{ users: { id: string; email: string }[] }>(manager ? '/admin/users' : null);
  const connections = useResource<{ connections: Connection[] }>(
    `/oauth/connections?userId=${encodeURIComponent(userId)}`,
  );
  const { api } = useSession();
  const revoke = useAction();
  const whose =
    userId === me.id
      ? 'Your connected clients'
      : `Connected clients of ${users.data?.users.find((u) => u.id === userId)?.email ?? userId}`;

  return (
    <Layout title="Connected clients">
      <p className="hint">
        MCP clients (desktop and IDE assistants, hosted connectors) that signed in to the gateway with OAuth. Revoking
        one signs it out at once.
      </p>
      {manager && users.data ? (
        <SelectField
          label="User"
          value={userId}
          onChange={(e) => setUserId(e.target.value)}
          options={users.data.users.map((u) => ({ value: u.id, label: u.email }))}
        />
      ) : null}
      <section aria-labelledby="connections-list">
        <h2 id="connections-list">{whose}</h2>
        <ErrorNotice error={revoke.error} title="Not revoked" />
        {connections.loading && !connections.data ? <Loading what="connected clients" /> : null}
        <ErrorNotice error={connections.error} title="Could not load the connected clients" />
        {connections.data?.connections.length === 0 ? <Empty>No connected clients.</Empty> : null}
        {connections.data && connections.data.connections.length > 0 ? (
          <DataTable caption={whose} columns={['Client', 'Endpoints', 'Connected', 'Actions']}>
            {connections.data.connections.map((c) => (
              <tr key={c.grantId}>
                <td data-label="Client">
                  {c.clientName ?? c.clientId}
                  {c.clientName ? <span className="hint mono"> ({c.clientId})</span> : null}
                </td>
                <td data-label="Endpoints" className="mono">
                  {c.resources.join(', ')}
                </td>
                <td data-label="Connected">{new Date(c.createdAt).toLocaleString()}</td>
                <td data-label="Actions">
                  <ConfirmButton
                    label="Revoke"
                    confirmLabel={`Revoke ${c.clientName ?? c.clientId}`}
                    disabled={revoke.busy}
                    onConfirm={() =>
                      void revoke
                        .run(() => api.del(`/oauth/connections/${encodeURIComponent(c.grantId)}`))
                        .then(connections.reload)
                    }
                  />
                </td>
              </tr>
            ))}
          </DataTable>
        ) : null}
      </section>
    </Layout>
  );
}
