import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { DataTable } from '../components/data-table.js';
import { Layout } from '../components/layout.js';
import { useSession } from '../session.js';
import type { ProviderPinning, ToolPin, ToolPinningMode } from '../types.js';
import { useAction, useResource } from '../use-resource.js';

const MODES: { value: ToolPinningMode; label: string }[] = [
  { value: 'off', label: 'Off: definitions are not pinned' },
  { value: 'first_sight', label: 'First sight: pin each tool when first listed' },
  { value: 'approval', label: 'Approval: a new tool waits for an admin' },
];

const STATUS_TEXT: Record<ToolPin['status'], string> = {
  pinned: 'Pinned',
  new: 'New: never approved',
  changed: 'Changed since it was approved',
  blocked: 'Kept blocked',
};

/**
 * Pinned tool definitions (issue 24.3): each provider's pinning mode, and every quarantined tool
 * with a diff of its approved definition against the one the upstream lists now, to approve (the
 * tool is listed and callable again) or keep blocked.
 */
export function ToolPinsPage() {
  const pins = useResource<{ pins: ToolPin[] }>('/admin/tool-pins');
  const modes = useResource<{ providers: ProviderPinning[] }>('/admin/tool-pins/providers');
  return (
    <Layout title="Tool pins">
      <section aria-labelledby="quarantined">
        <h2 id="quarantined">Quarantined tool definitions</h2>
        <p className="hint">
          A quarantined tool is neither listed to agents nor callable until its definition is approved here.
        </p>
        {pins.loading && !pins.data ? <Loading what="quarantined tools" /> : null}
        <ErrorNotice error={pins.error} title="Could not load the quarantined tools" />
        {pins.data?.pins.length === 0 ? <Empty>No tool definition waits for review.</Empty> : null}
        <ul className="cards pin-cards">
          {pins.data?.pins.map((pin) => (
            <QuarantinedTool key={`${pin.providerId}\n${pin.toolName}`} pin={pin} onDecided={pins.reload} />
          ))}
        </ul>
      </section>
      <section aria-labelledby="pinning-modes">
        <h2 id="pinning-modes">Pinning per provider</h2>
        {modes.loading && !modes.data ? <Loading what="providers" /> : null}
        <ErrorNotice error={modes.error} title="Could not load the providers" />
        {modes.data ? (
          <PinningModes providers={modes.data.providers} onChanged={() => (modes.reload(), pins.reload())} />
        ) : null}
      </section>
    </Layout>
  );
}

/** One quarantined definition: what changed, and the two decisions. */
function QuarantinedTool({ pin, onDecided }: { pin: ToolPin; onDecided: () => void }) {
  const { api } = useSession();
  const decide = useAction();
  const review = (action: 'approve' | 'block') =>
    void decide
      .run(() =>
        api.post(`/admin/tool-pins/${action}`, {
          providerId: pin.providerId,
          toolName: pin.toolName,
          hash: pin.pending?.hash,
        }),
      )
      .then(onDecided);
  const headingId = `pin-${pin.providerId}-${pin.toolName}`;
  return (
    <li className="card pin-card" aria-labelledby={headingId}>
      <h3 id={headingId}>
        <span className="mono">{pin.toolName}</span> <span className="small">on {pin.providerName}</span>
      </h3>
      <dl className="facts">
        <dt>Status</dt>
        <dd className={`status pin-${pin.status}`}>{STATUS_TEXT[pin.status]}</dd>
        {pin.renamedFrom ? (
          <>
            <dt>Renamed from</dt>
            <dd className="mono">{pin.renamedFrom} (same definition otherwise)</dd>
          </>
        ) : null}
        {pin.pending ? (
          <>
            <dt>First seen</dt>
            <dd>{new Date(pin.pending.firstSeenAt).toLocaleString()}</dd>
          </>
        ) : null}
      </dl>
      <DefinitionDiff pin={pin} />
      <ErrorNotice error={decide.error} title="Not decided" />
      <div className="form-actions">
        <button type="button" disabled={decide.busy || !pin.pending} onClick={() => review('approve')}>
          Approve
        </button>
        {pin.status !== 'blocked' ? (
          <button
            type="button"
            className="secondary"
            disabled={decide.busy || !pin.pending}
            onClick={() => review('block')}
          >
            Keep blocked
          </button>
        ) : null}
      </div>
    </li>
  );
}

/** The approved definition (or nothing, for a new tool) against the quarantined one, line by line. */
function DefinitionDiff({ pin }: { pin: ToolPin }) {
  return (
    <figure className="diff-figure">
      <figcaption className="small">
        {pin.pinned ? 'Approved definition → definition listed now' : 'Definition listed now (never approved)'}
      </figcaption>
      <pre className="diff" aria-label={`Definition diff of ${pin.toolName}`}>
        {pin.diff.map((line, i) => (
          <span key={i} className={`diff-line diff-${line.op}`}>
            <span aria-hidden="true">{line.op === 'added' ? '+ ' : line.op === 'removed' ? '- ' : '  '}</span>
            <span className="sr-only">{line.op === 'same' ? '' : `${line.op}: `}</span>
            {line.text}
            {'\n'}
          </span>
        ))}
      </pre>
    </figure>
  );
}

/** Each visible provider's pinning mode, changed in place. */
function PinningModes({ providers, onChanged }: { providers: ProviderPinning[]; onChanged: () => void }) {
  const { api } = useSession();
  const change = useAction();
  if (providers.length === 0) return <Empty>No tool providers.</Empty>;
  return (
    <>
      <ErrorNotice error={change.error} title="Mode not changed" />
      <DataTable caption="Pinning mode per provider" columns={['Provider', 'Pinning']}>
        {providers.map((p) => (
          <tr key={p.providerId}>
            <td data-label="Provider">{p.providerName}</td>
            <td data-label="Pinning">
              <select
                aria-label={`Pinning of ${p.providerName}`}
                value={p.pinning}
                disabled={change.busy}
                onChange={(e) =>
                  void change
                    .run(() => api.put(`/admin/tool-pins/providers/${p.providerId}`, { pinning: e.target.value }))
                    .then(onChanged)
                }
              >
                {MODES.map((m) => (
                  <option key={m.value} value={m.value}>
                    {m.label}
                  </option>
                ))}
              </select>
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}
