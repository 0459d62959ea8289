import { useState, type FormEvent } from 'react';
import { ConfirmButton } from '../components/confirm-button.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { DataTable } from '../components/data-table.js';
import { CheckboxField, TenantField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { describeScope } from '../navigation.js';
import { useSession, useUser } from '../session.js';
import type { Role } from '../types.js';
import { useAction, useResource } from '../use-resource.js';

interface UserRecord {
  id: string;
  email: string;
  name: string | null;
  roles: Role[];
  tenantId: string | null;
  createdAt?: string;
}

const ROLES: Role[] = ['admin', 'tenant_admin', 'agent_creator'];

/** Users (admin): create with roles and tenant, grant or remove a role, delete. */
export function UsersPage() {
  const { api } = useSession();
  const me = useUser();
  const users = useResource<{ users: UserRecord[] }>('/admin/users');
  const action = useAction();
  const toggle = (u: UserRecord, role: Role, on: boolean) =>
    void action
      .run(() =>
        on ? api.post(`/admin/users/${u.id}/roles`, { role }) : api.del(`/admin/users/${u.id}/roles/${role}`),
      )
      .then(users.reload);

  return (
    <Layout title="Users">
      <CreateUserForm onCreated={users.reload} />
      <section aria-labelledby="users-list">
        <h2 id="users-list">Users</h2>
        <ErrorNotice error={action.error} />
        {users.loading && !users.data ? <Loading what="users" /> : null}
        <ErrorNotice error={users.error} title="Could not load the users" />
        {users.data?.users.length === 0 ? <Empty>No users.</Empty> : null}
        {users.data && users.data.users.length > 0 ? (
          <DataTable caption="Users" columns={['Email', 'Name', 'Scope', 'Roles', 'Actions']}>
            {users.data.users.map((u) => (
              <tr key={u.id}>
                <td data-label="Email">{u.email}</td>
                <td data-label="Name">{u.name ?? '—'}</td>
                <td data-label="Scope">{describeScope(u.tenantId)}</td>
                <td data-label="Roles">
                  <fieldset className="roles-set">
                    <legend className="sr-only">Roles of {u.email}</legend>
                    {ROLES.map((r) => (
                      <CheckboxField
                        key={r}
                        label={r}
                        checked={u.roles.includes(r)}
                        disabled={action.busy || (u.id === me.id && r === 'admin')}
                        onChange={(e) => toggle(u, r, e.target.checked)}
                      />
                    ))}
                  </fieldset>
                </td>
                <td data-label="Actions">
                  {u.id === me.id ? (
                    <span className="hint">you</span>
                  ) : (
                    <ConfirmButton
                      label="Delete"
                      confirmLabel={`Delete ${u.email}`}
                      disabled={action.busy}
                      onConfirm={() => void action.run(() => api.del(`/admin/users/${u.id}`)).then(users.reload)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        ) : null}
      </section>
    </Layout>
  );
}

function CreateUserForm({ onCreated }: { onCreated: () => void }) {
  const { api } = useSession();
  const empty = { email: '', password: '', name: '', tenantId: '', roles: ['agent_creator'] as Role[] };
  const [form, setForm] = useState(empty);
  const action = useAction();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const body: Record<string, unknown> = { email: form.email, password: form.password, roles: form.roles };
      if (form.name) body.name = form.name;
      if (form.tenantId.trim()) body.tenantId = form.tenantId.trim();
      await api.post('/admin/users', body);
      setForm(empty);
      onCreated();
    });
  };

  return (
    <section className="card" aria-labelledby="create-user">
      <h2 id="create-user">Create a user</h2>
      <form onSubmit={submit} className="grid-form" aria-label="Create a user">
        <TextField
          label="Email"
          type="email"
          autoComplete="off"
          required
          value={form.email}
          onChange={(e) => setForm({ ...form, email: e.target.value })}
        />
        <TextField
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          value={form.password}
          onChange={(e) => setForm({ ...form, password: e.target.value })}
        />
        <TextField
          label="Name (optional)"
          value={form.name}
          onChange={(e) => setForm({ ...form, name: e.target.value })}
        />
        <TenantField value={form.tenantId} onChange={(tenantId) => setForm({ ...form, tenantId })} />
        <fieldset>
          <legend>Roles</legend>
          {ROLES.map((r) => (
            <CheckboxField
              key={r}
              label={r}
              checked={form.roles.includes(r)}
              onChange={(e) =>
                setForm({ ...form, roles: e.target.checked ? [...form.roles, r] : form.roles.filter((x) => x !== r) })
              }
            />
          ))}
        </fieldset>
        <ErrorNotice error={action.error} title="The user was not created" />
        <div className="form-actions">
          <button type="submit" disabled={action.busy}>
            Create user
          </button>
        </div>
      </form>
    </section>
  );
}
