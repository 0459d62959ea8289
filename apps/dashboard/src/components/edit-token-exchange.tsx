import { useState, type FormEvent } from 'react';
import {
  tokenExchangeDraftOf,
  tokenExchangeFieldError,
  tokenExchangeUpdateBody,
} from '../pages/token-exchange-form.js';
import { useSession } from '../session.js';
import type { ToolProvider } from '../types.js';
import { useAction } from '../use-resource.js';
import { ErrorNotice } from './feedback.js';
import { CheckboxField } from './fields.js';
import { TokenExchangeFields } from './token-exchange-fields.js';

/**
 * Editing a `token_exchange` provider's settings on its card: prefilled from the provider, the
 * client secret write-only (empty keeps the stored one; the box removes it for a public client).
 */
export function EditTokenExchange({ provider, onSaved }: { provider: ToolProvider; onSaved: () => void }) {
  const { api } = useSession();
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState(() => tokenExchangeDraftOf(provider));
  const [removeSecret, setRemoveSecret] = useState(false);
  const action = useAction();

  const toggle = () => {
    if (!open) {
      setDraft(tokenExchangeDraftOf(provider));
      setRemoveSecret(false);
    }
    setOpen(!open);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await api.put(`/admin/tool-providers/${provider.id}`, tokenExchangeUpdateBody(draft, { removeSecret }));
      setOpen(false);
      onSaved();
    });
  };

  return (
    <div className="edit-token-exchange">
      <button type="button" className="secondary" aria-expanded={open} onClick={toggle}>
        {open ? 'Cancel editing' : 'Edit token exchange'}
        <span className="sr-only"> of {provider.name}</span>
      </button>
      {open ? (
        <form onSubmit={submit} className="grid-form" aria-label={`Token exchange of ${provider.name}`}>
          <TokenExchangeFields
            value={draft}
            onChange={(patch) => setDraft((d) => ({ ...d, ...patch }))}
            error={tokenExchangeFieldError(action.error)}
            secretStored={provider.hasAuthSecret}
          />
          {provider.hasAuthSecret ? (
            <CheckboxField
              label="Remove the stored client secret (a public client)"
              checked={removeSecret}
              disabled={draft.clientSecret !== ''}
              onChange={(e) => setRemoveSecret(e.target.checked)}
            />
          ) : null}
          <ErrorNotice error={action.error} title="The settings were not saved" />
          <div className="form-actions">
            <button type="submit" disabled={action.busy}>
              {action.busy ? 'Saving…' : 'Save token exchange'}
            </button>
          </div>
        </form>
      ) : null}
    </div>
  );
}
