/**
 * The `token_exchange` part of the tool-provider form: its draft, the request body it becomes
 * and where an API 400 naming a `tokenExchange.*` field is shown. Kept apart from the page so it
 * can be tested without a browser.
 */
import { ApiError } from '../api.js';
import type { components } from '../api-types.gen.js';
import type { ToolProvider } from '../types.js';

/** The request body's `tokenExchange` (RFC 8693 settings). */
export type TokenExchangeInput = components['schemas']['ToolProviderTokenExchangeInput'];

/** How the authorization server is given: its token endpoint, or its issuer (endpoint discovered). */
export type TokenExchangeServerKind = 'token_url' | 'issuer';

/** What the admin types; `clientSecret` is write-only (never prefilled, never shown back). */
export interface TokenExchangeDraft {
  serverKind: TokenExchangeServerKind;
  serverUrl: string;
  clientId: string;
  clientSecret: string;
  audience: string;
  resource: string;
  scope: string;
}

/** A draft's field names: where a field error is shown. */
export type TokenExchangeDraftField = keyof TokenExchangeDraft;

/** The blank draft of a new provider. */
export const EMPTY_TOKEN_EXCHANGE: TokenExchangeDraft = {
  serverKind: 'token_url',
  serverUrl: '',
  clientId: '',
  clientSecret: '',
  audience: '',
  resource: '',
  scope: '',
};

/** The body's `tokenExchange`: exactly one of tokenUrl/issuer, blank optionals left out (an empty secret: a public client). */
export function tokenExchangeBody(draft: TokenExchangeDraft): TokenExchangeInput {
  const url = draft.serverUrl.trim();
  const body: TokenExchangeInput =
    draft.serverKind === 'token_url'
      ? { tokenUrl: url, clientId: draft.clientId.trim() }
      : { issuer: url, clientId: draft.clientId.trim() };
  if (draft.clientSecret) body.clientSecret = draft.clientSecret;
  const audience = draft.audience.trim();
  const resource = draft.resource.trim();
  const scope = draft.scope.trim();
  if (audience) body.audience = audience;
  if (resource) body.resource = resource;
  if (scope) body.scope = scope;
  return body;
}

/** An existing provider's settings as a draft to edit: everything prefilled but the secret, which is never read back (empty keeps it). */
export function tokenExchangeDraftOf(provider: Pick<ToolProvider, 'tokenExchange'>): TokenExchangeDraft {
  const te = provider.tokenExchange;
  if (te === null) return EMPTY_TOKEN_EXCHANGE;
  return {
    serverKind: te.tokenUrl !== null ? 'token_url' : 'issuer',
    serverUrl: te.tokenUrl ?? te.issuer ?? '',
    clientId: te.clientId,
    clientSecret: '',
    audience: te.audience ?? '',
    resource: te.resource ?? '',
    scope: te.scope ?? '',
  };
}

/**
 * The update body of an edit: the settings replaced whole (a blank optional is cleared), the
 * stored client secret kept unless a new one is typed, or removed (`authSecret: null`) when the
 * admin makes the client public.
 */
export function tokenExchangeUpdateBody(
  draft: TokenExchangeDraft,
  options: { removeSecret: boolean },
): { tokenExchange: TokenExchangeInput; authSecret?: null } {
  const tokenExchange = tokenExchangeBody(draft);
  return options.removeSecret && tokenExchange.clientSecret === undefined
    ? { tokenExchange, authSecret: null }
    : { tokenExchange };
}

/** The API's dotted `field` names under `tokenExchange` and the draft field that holds each. */
const FIELD_OF: Record<string, TokenExchangeDraftField> = {
  tokenUrl: 'serverUrl',
  issuer: 'serverUrl',
  clientId: 'clientId',
  clientSecret: 'clientSecret',
  audience: 'audience',
  resource: 'resource',
  scope: 'scope',
};

/** A 400 naming a `tokenExchange` field, as the draft field to mark and the message to show there; null for any other failure. */
export function tokenExchangeFieldError(
  error: unknown,
): { field: TokenExchangeDraftField | 'tokenExchange'; message: string } | null {
  if (!(error instanceof ApiError) || error.status !== 400) return null;
  const field = typeof error.details.field === 'string' ? error.details.field : '';
  if (field === 'tokenExchange') return { field: 'tokenExchange', message: withoutPrefix(error.message, field) };
  const name = field.startsWith('tokenExchange.') ? field.slice('tokenExchange.'.length) : null;
  const target = name === null ? undefined : FIELD_OF[name];
  return target ? { field: target, message: withoutPrefix(error.message, field) } : null;
}

// The API's message repeats the field ("tokenExchange.clientId: Required"); beside the field itself it is noise.
function withoutPrefix(message: string, field: string): string {
  return message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
}

/** One line for a provider card: where the caller's token is exchanged, as which client, and whether a secret is set (never the secret). */
export function describeTokenExchange(provider: Pick<ToolProvider, 'tokenExchange' | 'hasAuthSecret'>): string {
  const te = provider.tokenExchange;
  if (te === null) return 'token_exchange: not configured';
  const server = te.tokenUrl !== null ? `token endpoint ${te.tokenUrl}` : `issuer ${te.issuer ?? '?'}`;
  const target = [
    te.audience ? `audience ${te.audience}` : null,
    te.resource ? `resource ${te.resource}` : null,
    te.scope ? `scope ${te.scope}` : null,
  ].filter((p) => p !== null);
  const secret = provider.hasAuthSecret ? 'client secret set' : 'client secret not set (public client)';
  return `token_exchange at ${server} as client ${te.clientId}; ${secret}${target.length > 0 ? `; ${target.join(', ')}` : ''}`;
}
