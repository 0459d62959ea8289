import { useState } from 'react';
import { toConfirmation, type PendingConfirmation } from '../confirmation-stream.js';
import { useLiveConfirmations } from '../confirmations-context.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { DataTable } from '../components/data-table.js';
import { SelectField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { useSession, useUser } from '../session.js';
import { HISTORY_FILTERS, statusLabel } from '../confirmation-status.js';
import { useAgentNames, useProviderNames } from '../use-agent-names.js';
import { useAction, useResource } from '../use-resource.js';

/** Held tool calls, live over SSE, approved or rejected here; plus the stored history by status. */
export function ConfirmationsPage() {
  const live = useLiveConfirmations();
  const agentName = useAgentNames();
  const providerName = useProviderNames();
  // The card goes once answered: this line says what happened to it.
  const [answered, setAnswered] = useState<string | null>(null);
  return (
    <Layout title="Confirmations">
      <div className="live-bar">
        <StreamState />
        <NotificationControl />
      </div>
      <section aria-labelledby="pending">
        <h2 id="pending">Waiting for you</h2>
        <p className="answered" role="status" data-testid="answered">
          {answered}
        </p>
        <ErrorNotice error={live.syncError} title="Could not load the pending list" />
        {live.pending.length === 0 ? (
          <Empty>No tool call is waiting for confirmation. New ones appear here as they happen.</Empty>
        ) : null}
        <ul className="cards" aria-live="polite">
          {live.pending.map((c) => (
            <ConfirmationCard
              key={c.id}
              confirmation={c}
              agentName={agentName}
              providerName={providerName}
              onAnswered={setAnswered}
            />
          ))}
        </ul>
      </section>
      <History />
    </Layout>
  );
}

function StreamState() {
  const { status } = useLiveConfirmations();
  const text =
    status.state === 'live'
      ? 'Live: new requests appear as they happen.'
      : status.state === 'connecting'
        ? 'Connecting to the live stream…'
        : `Live stream unavailable (${status.reason}); retrying in ${status.inSeconds} s.`;
  return (
    <p className={`stream-state ${status.state}`} role="status">
      <span className="dot" aria-hidden="true" /> {text}
    </p>
  );
}

function NotificationControl() {
  const { notificationsAllowed, askNotifications } = useLiveConfirmations();
  if (notificationsAllowed === 'unsupported') return <p className="hint">This browser has no notifications.</p>;
  if (notificationsAllowed === 'granted') return <p className="hint">Browser notifications are on.</p>;
  if (notificationsAllowed === 'denied')
    return <p className="hint">Notifications are blocked for this site in the browser settings.</p>;
  return (
    <button type="button" className="secondary" onClick={() => void askNotifications()}>
      Notify me of new requests
    </button>
  );
}

function ConfirmationCard({
  confirmation: c,
  agentName,
  providerName,
  onAnswered,
}: {
  confirmation: PendingConfirmation;
  agentName: (id: string | null) => string | null;
  providerName: (id: string | null) => string | null;
  onAnswered: (text: string) => void;
}) {
  const { api } = useSession();
  const me = useUser();
  const { forget } = useLiveConfirmations();
  const [reason, setReason] = useState('');
  const action = useAction();
  const respond = (confirmed: boolean) =>
    void action.run(async () => {
      await api.post(
        `/confirmation/${encodeURIComponent(c.id)}/respond`,
        reason && !confirmed ? { confirmed, reason } : { confirmed },
      );
      forget(c.id);
      onAnswered(
        confirmed
          ? `Approved ${c.toolName}: the call runs now and ends in the history as "approved, ran".`
          : `Rejected ${c.toolName}${reason ? ` (${reason})` : ''}: the agent gets an error and the tool does not run.`,
      );
    });

  return (
    <li className={`card confirmation risk-${c.risk}`} aria-labelledby={`c-${c.id}`}>
      <h3 id={`c-${c.id}`}>
        <code>{c.toolName}</code> <span className={`risk risk-${c.risk}`}>risk {c.risk}</span>
      </h3>
      <dl className="facts">
        <dt>Request</dt>
        <dd className="mono small">{c.id}</dd>
        {c.timestamp ? (
          <>
            <dt>Asked at</dt>
            <dd>{new Date(c.timestamp).toLocaleString()}</dd>
          </>
        ) : null}
        {c.expiresAt ? (
          <>
            <dt>Times out at</dt>
            <dd>{new Date(c.expiresAt).toLocaleTimeString()}</dd>
          </>
        ) : null}
        {c.agentId ? (
          <>
            <dt>Agent</dt>
            <dd>{agentName(c.agentId)}</dd>
          </>
        ) : null}
        {c.providerId ? (
          <>
            <dt>Provider</dt>
            <dd>{providerName(c.providerId)}</dd>
          </>
        ) : null}
        <dt>Acts for</dt>
        <dd>{actsFor(c, me.id)}</dd>
      </dl>
      <h4>Arguments</h4>
      <pre className="json" data-testid="confirmation-arguments">
        {JSON.stringify(c.arguments ?? {}, null, 2)}
      </pre>
      <TextField label="Reason (sent with a rejection)" value={reason} onChange={(e) => setReason(e.target.value)} />
      <ErrorNotice error={action.error} title="Not answered" />
      <div className="actions">
        <button type="button" className="approve" disabled={action.busy} onClick={() => respond(true)}>
          Approve<span className="sr-only"> {c.toolName}</span>
        </button>
        <button type="button" className="danger" disabled={action.busy} onClick={() => respond(false)}>
          Reject<span className="sr-only"> {c.toolName}</span>
        </button>
      </div>
    </li>
  );
}

/** The person the held call acts for: its end user, else the caller (an agent's own call acts for nobody). */
function actsFor(c: PendingConfirmation, myId: string): string {
  const person = c.endUserId ?? c.userId;
  if (person === null) return 'nobody (the agent acts on its own)';
  return person === myId ? 'you' : `user ${person}`;
}

function History() {
  const me = useUser();
  const [status, setStatus] = useState<string>(HISTORY_FILTERS[0].value);
  const filterLabel = HISTORY_FILTERS.find((f) => f.value === status)?.label ?? status;
  const list = useResource<{ data?: unknown[]; confirmations?: unknown[] }>(`/confirmation/list?status=${status}`);
  const rows = (list.data?.data ?? list.data?.confirmations ?? [])
    .map(toConfirmation)
    .filter((c): c is PendingConfirmation => c !== null);
  return (
    <section aria-labelledby="history">
      <h2 id="history">History</h2>
      <form className="filters" aria-label="Filter the history" onSubmit={(e) => e.preventDefault()}>
        <SelectField
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value)}
          options={HISTORY_FILTERS.map((f) => ({ value: f.value, label: f.label }))}
        />
        <button type="button" className="secondary" onClick={list.reload}>
          Refresh
        </button>
      </form>
      {list.loading && !list.data ? <Loading what="confirmations" /> : null}
      <ErrorNotice error={list.error} title="Could not load the history" />
      {list.data && rows.length === 0 ? <Empty>No confirmations {filterLabel}.</Empty> : null}
      {rows.length > 0 ? (
        <DataTable
          caption={`Confirmations ${filterLabel}`}
          columns={['Tool', 'Risk', 'Status', 'When', 'Decided by', 'Reason']}
        >
          {rows.map((c) => (
            <tr key={c.id}>
              <td data-label="Tool" className="mono">
                {c.toolName}
              </td>
              <td data-label="Risk">{c.risk}</td>
              <td data-label="Status">{statusLabel(c)}</td>
              <td data-label="When">{c.timestamp ? new Date(c.timestamp).toLocaleString() : '—'}</td>
              <td data-label="Decided by" className="mono small">
                {c.decidedBy === me.id ? 'you' : (c.decidedBy ?? '—')}
              </td>
              <td data-label="Reason">{c.reason ?? '—'}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}
