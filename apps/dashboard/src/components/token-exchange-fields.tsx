import { SelectField, TextField } from './fields.js';
import type {
  TokenExchangeDraft,
  TokenExchangeDraftField,
  TokenExchangeServerKind,
} from '../pages/token-exchange-form.js';

const SERVER_KINDS: Array<{ value: TokenExchangeServerKind; label: string }> = [
  { value: 'token_url', label: 'Token endpoint URL' },
  { value: 'issuer', label: 'Issuer (token endpoint discovered)' },
];

/**
 * The inputs of a `token_exchange` provider; a field the API refused shows the API's message as
 * its hint and is marked invalid. `secretStored` (editing a provider that has one): an empty
 * secret keeps the stored one, which is never shown.
 */
export function TokenExchangeFields({
  value,
  onChange,
  error,
  secretStored = false,
}: {
  value: TokenExchangeDraft;
  onChange: (patch: Partial<TokenExchangeDraft>) => void;
  error: { field: TokenExchangeDraftField | 'tokenExchange'; message: string } | null;
  secretStored?: boolean;
}) {
  const problem = (field: TokenExchangeDraftField, hint?: string) =>
    error?.field === field
      ? { hint: error.message, 'aria-invalid': true as const }
      : hint === undefined
        ? {}
        : { hint };
  return (
    <fieldset>
      <legend>Token exchange (RFC 8693)</legend>
      <p className="hint">
        Each call exchanges the caller&apos;s own sign-in token at this authorization server; only the exchanged token
        goes upstream.
      </p>
      <SelectField
        label="Authorization server given as"
        options={SERVER_KINDS}
        value={value.serverKind}
        onChange={(e) => onChange({ serverKind: e.target.value as TokenExchangeServerKind })}
      />
      <TextField
        label={value.serverKind === 'token_url' ? 'Token endpoint URL' : 'Issuer URL'}
        type="url"
        required
        placeholder={
          value.serverKind === 'token_url' ? 'https://auth.example.com/oauth/token' : 'https://auth.example.com'
        }
        value={value.serverUrl}
        onChange={(e) => onChange({ serverUrl: e.target.value })}
        {...problem('serverUrl')}
      />
      <TextField
        label="Client ID"
        required
        maxLength={500}
        value={value.clientId}
        onChange={(e) => onChange({ clientId: e.target.value })}
        {...problem('clientId')}
      />
      <TextField
        label={secretStored ? 'New client secret (optional)' : 'Client secret (optional)'}
        type="password"
        autoComplete="off"
        maxLength={8192}
        value={value.clientSecret}
        onChange={(e) => onChange({ clientSecret: e.target.value })}
        {...problem(
          'clientSecret',
          secretStored
            ? 'A client secret is stored (never shown). Empty keeps it; a new one replaces it.'
            : 'Write-only: stored sealed, never shown again (the provider then reads "client secret set"). Empty: a public client.',
        )}
      />
      <TextField
        label="Audience (optional)"
        maxLength={500}
        value={value.audience}
        onChange={(e) => onChange({ audience: e.target.value })}
        {...problem('audience')}
      />
      <TextField
        label="Resource (optional)"
        type="url"
        maxLength={2048}
        value={value.resource}
        onChange={(e) => onChange({ resource: e.target.value })}
        {...problem('resource')}
      />
      <TextField
        label="Scope (optional)"
        maxLength={1000}
        placeholder="read write"
        value={value.scope}
        onChange={(e) => onChange({ scope: e.target.value })}
        {...problem('scope')}
      />
      {error?.field === 'tokenExchange' ? (
        <p className="notice notice-error" role="alert">
          {error.message}
        </p>
      ) : null}
    </fieldset>
  );
}
