import { useState } from 'react';
import { DataTable } from '../components/data-table.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { SelectField } from '../components/fields.js';
import type { IdentityEventsPage, IdentityEventType } from '../types.js';
import { useResource } from '../use-resource.js';

/** Each event type in words (a Record, so a type the API adds fails the build until it is named here). */
const EVENT_LABELS: Record<IdentityEventType, string> = {
  'oauth.client_registered': 'Client registered',
  'oauth.consent_given': 'Consent given',
  'oauth.consent_reused': 'Consent remembered',
  'oauth.consent_denied': 'Consent denied',
  'oauth.grant_revoked': 'Grant revoked',
  'connected_account.linked': 'Account connected',
  'connected_account.refreshed': 'Account refreshed',
  'connected_account.refresh_refused': 'Account refresh refused',
  'connected_account.disconnected': 'Account disconnected',
  'token_exchange.refused': 'Token exchange refused',
};
const PAGE = 50;

/** Who acted, in words: a user, or (no actor) the client or the gateway that `details.by` names. */
function actorOf(actorId: string | null, details: Record<string, unknown>): string {
  if (actorId !== null) return actorId;
  return typeof details.by === 'string' ? details.by : 'client';
}

/** The Audit page's Identity section: sign-ins, consents, grants, connected accounts and refused token exchanges, newest first. */
export function IdentityEventsSection() {
  const [type, setType] = useState<IdentityEventType | ''>('');
  // The cursors of the pages before the shown one (empty on the newest page).
  const [cursors, setCursors] = useState<string[]>([]);
  const query = new URLSearchParams({ limit: String(PAGE) });
  if (type) query.set('type', type);
  const cursor = cursors.at(-1);
  if (cursor !== undefined) query.set('cursor', cursor);
  const events = useResource<IdentityEventsPage>(`/audit/identity-events?${query.toString()}`);
  const next = events.data?.next ?? null;

  return (
    <section aria-labelledby="identity">
      <h2 id="identity">Identity</h2>
      <form className="filters card" aria-label="Filter identity events" onSubmit={(e) => e.preventDefault()}>
        <SelectField
          label="Event"
          value={type}
          onChange={(e) => {
            setType(e.target.value as IdentityEventType | '');
            setCursors([]);
          }}
          options={[
            { value: '', label: 'Any' },
            ...Object.entries(EVENT_LABELS).map(([value, label]) => ({ value, label })),
          ]}
        />
        <div className="form-actions">
          <button type="button" className="secondary" onClick={events.reload}>
            Reload events
          </button>
        </div>
      </form>
      {events.loading ? <Loading what="identity events" /> : null}
      <ErrorNotice error={events.error} title="Could not load the identity events" />
      {events.data && events.data.data.length === 0 ? <Empty>No identity events match.</Empty> : null}
      {events.data && events.data.data.length > 0 ? (
        <DataTable caption="Identity events" columns={['When', 'Event', 'Who', 'User', 'Client', 'Details']}>
          {events.data.data.map((e) => (
            <tr key={e.id} data-testid="identity-row">
              <td data-label="When">{new Date(e.createdAt).toLocaleString()}</td>
              <td data-label="Event">
                {EVENT_LABELS[e.type as IdentityEventType] ?? e.type}
                <div className="mono small">{e.type}</div>
              </td>
              <td data-label="Who" className="mono small">
                {actorOf(e.actorId, e.details)}
              </td>
              <td data-label="User" className="mono small">
                {e.userId ?? '—'}
              </td>
              <td data-label="Client" className="mono small">
                {e.clientId ?? '—'}
              </td>
              <td data-label="Details">
                <details>
                  <summary>Details</summary>
                  <pre className="json">{JSON.stringify({ tenantId: e.tenantId, ...e.details }, null, 2)}</pre>
                </details>
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      <nav className="pager" aria-label="Identity event pages">
        <button
          type="button"
          className="secondary"
          disabled={cursors.length === 0}
          onClick={() => setCursors((c) => c.slice(0, -1))}
        >
          Newer
        </button>
        <button
          type="button"
          className="secondary"
          disabled={next === null}
          onClick={() => next !== null && setCursors((c) => [...c, next])}
        >
          Older
        </button>
      </nav>
    </section>
  );
}
