import { useEffect, useRef, useState } from 'react';

/**
 * A token or key the gateway shows only once (runtime tokens, API keys): focused on arrival,
 * with a copy button and a warning that it cannot be retrieved later.
 */
export function OneTimeSecret({ label, value, onDismiss }: { label: string; value: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), [value]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };

  return (
    <section className="secret" aria-labelledby="one-time-secret-title" ref={ref} tabIndex={-1}>
      <h3 id="one-time-secret-title">{label}</h3>
      <p>Copy it now: it is shown only this once and cannot be retrieved later.</p>
      <div className="secret-row">
        <code data-testid="one-time-secret">{value}</code>
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p role="status" className="hint">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'Copying failed: select the text and copy it by hand.'
            : ''}
      </p>
      <button type="button" className="secondary" onClick={onDismiss}>
        I have stored it
      </button>
    </section>
  );
}
