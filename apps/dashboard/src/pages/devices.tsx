import { useState, type FormEvent } from 'react';
import { ConfirmButton } from '../components/confirm-button.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { DataTable } from '../components/data-table.js';
import { SelectField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { useSession } from '../session.js';
import type { Device } from '../types.js';
import { useAction, useResource } from '../use-resource.js';

/** The current user's devices for push notifications: register, list, remove. */
export function DevicesPage() {
  const { api } = useSession();
  const devices = useResource<{ devices: Device[] }>('/notifications/devices');
  const [form, setForm] = useState({ platform: 'ios', pushToken: '', deviceName: '' });
  const add = useAction();
  const remove = useAction();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void add.run(async () => {
      await api.post('/notifications/devices', {
        platform: form.platform,
        pushToken: form.pushToken,
        deviceName: form.deviceName || null,
      });
      setForm({ ...form, pushToken: '', deviceName: '' });
      devices.reload();
    });
  };

  return (
    <Layout title="Devices">
      <section className="card" aria-labelledby="add-device">
        <h2 id="add-device">Register a device</h2>
        <p className="hint">
          Usually the mobile or desktop app does this; here you can add or re-activate one by its push token.
        </p>
        <form onSubmit={submit} className="grid-form" aria-label="Register a device">
          <SelectField
            label="Platform"
            value={form.platform}
            onChange={(e) => setForm({ ...form, platform: e.target.value })}
            options={[
              { value: 'ios', label: 'iOS' },
              { value: 'macos', label: 'macOS' },
              { value: 'android', label: 'Android' },
            ]}
          />
          <TextField
            label="Push token"
            required
            autoComplete="off"
            value={form.pushToken}
            onChange={(e) => setForm({ ...form, pushToken: e.target.value })}
          />
          <TextField
            label="Device name (optional)"
            value={form.deviceName}
            onChange={(e) => setForm({ ...form, deviceName: e.target.value })}
          />
          <ErrorNotice error={add.error} title="Not registered" />
          <div className="form-actions">
            <button type="submit" disabled={add.busy}>
              Register device
            </button>
          </div>
        </form>
      </section>
      <section aria-labelledby="devices-list">
        <h2 id="devices-list">Your devices</h2>
        <ErrorNotice error={remove.error} />
        {devices.loading && !devices.data ? <Loading what="devices" /> : null}
        <ErrorNotice error={devices.error} title="Could not load your devices" />
        {devices.data?.devices.length === 0 ? <Empty>No devices registered.</Empty> : null}
        {devices.data && devices.data.devices.length > 0 ? (
          <DataTable caption="Devices" columns={['Name', 'Platform', 'Push token', 'Registered', 'Actions']}>
            {devices.data.devices.map((d) => (
              <tr key={d.id}>
                <td data-label="Name">{d.deviceName ?? '(unnamed)'}</td>
                <td data-label="Platform">{d.platform}</td>
                <td data-label="Push token" className="mono">
                  {d.pushTokenPrefix}…
                </td>
                <td data-label="Registered">{new Date(d.createdAt).toLocaleString()}</td>
                <td data-label="Actions">
                  <ConfirmButton
                    label="Remove"
                    confirmLabel={`Remove ${d.deviceName ?? d.platform}`}
                    disabled={remove.busy}
                    onConfirm={() =>
                      void remove.run(() => api.del(`/notifications/devices/${d.id}`)).then(devices.reload)
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
