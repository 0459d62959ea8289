import type {
  AuditStatus,
  ConfirmationStatus,
  PolicyAction,
  RiskLevel,
  ToolPinningMode,
  ToolPinStatus,
} from '@agentgw/core';
import type { ConfirmationCarrier, ToolSurface } from '@agentgw/core';
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The whole data model. Column names are snake_case in SQL and here; services map rows to the
 * camelCase API shapes. `jsonb` columns are written as JSON strings (see `json()` in ./json.ts)
 * because pg would otherwise send JS arrays as Postgres arrays.
 */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type TimestampNullable = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;
type JsonNullable<T> = ColumnType<T | null, string | null | undefined, string | null>;

export type RoleName = 'admin' | 'tenant_admin' | 'agent_creator';
export type ApiKeyScope = 'credentials:resolve' | 'credentials:read' | 'credentials:write';
/** `user_oauth` / `user_key`: each call carries the calling user's own credential of the provider's `credential_service_type` (0010). */
export type ProviderAuthType =
  'bearer' | 'api_key' | 'none' | 'user_oauth' | 'user_key' | 'mcp_oauth' | 'token_exchange';
/** With `token_exchange` (0013): where the caller's sign-in token is exchanged (RFC 8693) and for what; the client secret is sealed in `auth_secret_enc`. */
export interface ProviderTokenExchangeSettings {
  server: { kind: 'token_url'; tokenUrl: string } | { kind: 'issuer'; issuer: string };
  clientId: string;
  audience: string | null;
  resource: string | null;
  scope: string | null;
}
export type CredentialAuthType = 'oauth2' | 'api_key' | 'jwt' | 'basic';
export type CredentialKind = 'jwt' | 'api_key' | 'oauth2' | 'basic';
export type DevicePlatform = 'ios' | 'macos' | 'android';

export interface UsersTable {
  id: string;
  email: string; // stored lower-cased; unique
  password_hash: string;
  name: string | null;
  tenant_id: string | null;
  roles: ColumnType<RoleName[], RoleName[], RoleName[]>; // text[]
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Set when the password changes; login tokens issued before it are refused. */
  password_changed_at: TimestampNullable;
}

/** A user of an external issuer (or JWT_PUBLIC_KEY) linked to a local user. */
export interface ExternalIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: string;
  created_at: Timestamp;
}

export interface AgentsTable {
  id: string;
  name: string;
  description: string | null;
  upstream_url: string;
  /** Sealed with the upstream-secrets key (never returned by the API). */
  upstream_secret_enc: string | null;
  require_confirmation: Generated<boolean>;
  /** What the unified MCP endpoint lists for it: every tool, or only the search meta-tools (0008). */
  tool_surface: ColumnType<ToolSurface, ToolSurface | undefined, ToolSurface>;
  required_credentials: Json<{ serviceType: string; description?: string }[]>;
  tenant_id: string | null;
  owner_id: string | null; // user that created it
  is_active: Generated<boolean>;
  runtime_token_hash: string; // sha256 hex, unique
  runtime_token_prefix: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  name: string;
  key_hash: string; // sha256 hex, unique
  key_prefix: string;
  scopes: ColumnType<ApiKeyScope[], ApiKeyScope[], ApiKeyScope[]>; // text[]
  user_id: string | null; // creator
  tenant_id: string | null;
  created_at: Timestamp;
  last_used_at: TimestampNullable;
  revoked_at: TimestampNullable;
}

export interface ToolProvidersTable {
  id: string;
  name: string;
  pattern: string;
  endpoint: string;
  auth_type: ColumnType<ProviderAuthType, ProviderAuthType | undefined, ProviderAuthType>;
  auth_secret_enc: string | null;
  /** With `user_oauth`/`user_key`: the service type of the user's credential sent upstream (0010). */
  credential_service_type: ColumnType<string | null, string | null | undefined, string | null>;
  priority: ColumnType<number, number | undefined, number>;
  description: string | null;
  tenant_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Prepended (with `__`) to every tool name it exposes on the unified endpoint; null: none (0005). */
  name_prefix: ColumnType<string | null, string | null | undefined, string | null>;
  /** How its tool definitions are pinned (0006). */
  tool_pinning: ColumnType<ToolPinningMode, ToolPinningMode | undefined, ToolPinningMode>;
  /** With `token_exchange`: the exchange settings (0013). */
  token_exchange: JsonNullable<ProviderTokenExchangeSettings>;
}

/** The name a tool is exposed under on the unified endpoint, chosen once per scope (0005). */
export interface ToolNamesTable {
  /** The tenant the calls act in; '' for none. */
  scope: string;
  provider_id: string;
  upstream_name: string;
  exposed_name: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** One tool's pinned definition and the quarantined one waiting for review, per provider (0006). */
export interface ToolPinsTable {
  provider_id: string;
  tool_name: string;
  status: ToolPinStatus;
  /** SHA-256 of the canonical JSON of the approved definition; null until one is approved. */
  pinned_hash: string | null;
  /** The same hash with the name left out: an identical tool under another name is a rename. */
  pinned_body_hash: string | null;
  pinned_definition: JsonNullable<Record<string, unknown>>;
  pending_hash: string | null;
  pending_definition: JsonNullable<Record<string, unknown>>;
  /** When the quarantined definition was first seen. */
  pending_since: TimestampNullable;
  renamed_from: string | null;
  approved_by: string | null;
  approved_at: TimestampNullable;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AccessRulesTable {
  id: string;
  subject_type: 'user' | 'agent';
  subject_id: string;
  provider_id: string; // a tool provider id, or '*'
  action: PolicyAction;
  tool_pattern: ColumnType<string, string | undefined, string>; // default '*'
  risk_level: RiskLevel | null;
  confirmation_mode: 'always' | 'never' | null;
  /** Where its confirmations may be answered besides the console (0016); null: the default, console and push. */
  confirm_carriers: ColumnType<
    ConfirmationCarrier[] | null,
    ConfirmationCarrier[] | null | undefined,
    ConfirmationCarrier[] | null
  >;
  description: string | null;
  tenant_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CredentialProvidersTable {
  id: string;
  name: string;
  service_type: string;
  auth_type: CredentialAuthType;
  description: string | null;
  config: Json<Record<string, unknown>>;
  tenant_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UserCredentialsTable {
  id: string;
  user_id: string;
  tenant_id: string | null;
  service_type: string;
  kind: CredentialKind;
  /** base64 of AES-256-GCM ciphertext||tag; nonce and key id stored beside it. */
  ciphertext: string;
  nonce: string; // base64, 12 bytes
  key_id: string;
  /** Non-secret facts about the credential (e.g. token subject), never the secret itself. */
  metadata: Json<Record<string, unknown>>;
  expires_at: TimestampNullable;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An OAuth connection in flight (0007): single use, bound to its user, provider and expiry. */
export interface OAuthFlowsTable {
  /** SHA-256 (base64url) of the `state` sent to the authorization server; the state itself is not stored. */
  state_hash: string;
  user_id: string;
  tenant_id: string | null;
  provider_id: string;
  service_type: string;
  /** PKCE verifier: useless without the authorization code, which only the callback receives. */
  code_verifier: string;
  redirect_uri: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

export interface ConfirmationsTable {
  id: string;
  status: ConfirmationStatus;
  user_id: string | null;
  end_user_id: string | null;
  agent_id: string | null;
  provider_id: string | null;
  tenant_id: string | null;
  tool_name: string;
  arguments: Json<unknown>;
  risk_level: RiskLevel;
  audit_id: string | null;
  reason: string | null;
  decided_by: string | null;
  decided_at: TimestampNullable;
  expires_at: Timestamp;
  created_at: Timestamp;
  /** SHA-256 of the exact call (agent, end user, provider, tool, arguments) a confirming answer's token lets through (0004). */
  call_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** The carrier the deciding answer came through (0016): console (and the hub's API), client or push; null until decided or for a timeout. */
  decided_via: ColumnType<
    ConfirmationCarrier | null,
    ConfirmationCarrier | null | undefined,
    ConfirmationCarrier | null
  >;
  /** The OAuth client that answered, when the answer came from the person's own MCP client (0016). */
  decided_client_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AuditLogsTable {
  id: string;
  user_id: string | null;
  agent_id: string | null;
  end_user_id: string | null;
  provider_id: string | null;
  tenant_id: string | null;
  /** Null only on a placeholder: an update written before its create (0002); queries skip those. */
  tool_name: string | null;
  /** `json` since 0018: kept as the text the writer sent, which the content hash takes as it is. */
  arguments: JsonNullable<unknown>;
  result: JsonNullable<unknown>;
  status: AuditStatus;
  duration: number | null;
  confirmed_by: string | null;
  error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Version of the job that set each mutable field (0002): a job's value wins only over an older one. */
  status_v: string | null;
  result_v: string | null;
  duration_v: string | null;
  confirmed_by_v: string | null;
  error_v: string | null;
  /** The OAuth client a call came through (0009), null for every other credential form. */
  oauth_client_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** A held call's: the carrier its confirmation was answered through (0017); null until answered, or when nobody answered (a timeout). */
  decided_via: ColumnType<
    ConfirmationCarrier | null,
    ConfirmationCarrier | null | undefined,
    ConfirmationCarrier | null
  >;
  /** The OAuth client that answered, from the person's own MCP client (0017). */
  decided_client_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Version of the job that set decided_via and decided_client_id together (0017). */
  decided_via_v: ColumnType<string | null, string | null | undefined, string | null>;
}

/** The authorization server's signing keys (0009): the public JWK in clear, the private one sealed under the platform key. */
export interface OAuthSigningKeysTable {
  kid: string;
  public_jwk: Json<Record<string, unknown>>;
  private_jwk_sealed: string;
  created_at: Timestamp;
}

/** oidc-provider's stored models (0009): one row per model name and id, with the lookup columns its adapter needs. */
export interface OAuthModelsTable {
  model: string;
  id: string;
  payload: Json<Record<string, unknown>>;
  grant_id: string | null;
  uid: string | null;
  account_id: string | null;
  expires_at: TimestampNullable;
}

/** An identity event (0014): who (`actor_id`, null when a client or the gateway acted) did what to whose sign-in or connection. */
export interface IdentityEventsTable {
  id: string;
  type: string;
  actor_id: string | null;
  user_id: string | null;
  tenant_id: string | null;
  client_id: string | null;
  details: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

/** A user's consent for an OAuth client to call one MCP endpoint with these scopes (0009), remembered for the next sign-in. */
export interface OAuthConsentsTable {
  user_id: string;
  client_id: string;
  resource: string;
  /** Space-separated, as OAuth writes scopes. */
  scopes: string;
  created_at: Timestamp;
}

/** An admin's binding of a user's MCP client (client_id `*`: all of that user's clients) to an agent (0011): the agent's rules apply, the user is end user. */
export interface OAuthClientAgentsTable {
  user_id: string;
  client_id: string;
  agent_id: string;
  created_by: string | null;
  created_at: Timestamp;
}

/** One link of an audit hash chain (0002): a job written, the row's content hash after it, the previous link. */
export interface AuditChainTable {
  /** The row's tenant id, '' for rows without one: one chain per tenant. */
  tenant_key: string;
  seq: number;
  audit_id: string;
  job_key: string;
  content_hash: string;
  prev_hash: string;
  hash: string;
  created_at: Timestamp;
}

/** Last link of each tenant's chain, and the anchor retention leaves when it prunes links (0002). */
export interface AuditChainHeadsTable {
  tenant_key: string;
  seq: number;
  hash: string;
  pruned_seq: ColumnType<number, number | undefined, number>;
  pruned_hash: string;
}

export interface DevicesTable {
  id: string;
  user_id: string;
  tenant_id: string | null;
  platform: DevicePlatform;
  push_token: string;
  device_name: string | null;
  is_active: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One row per sealing key: an HMAC under the key the stored data was sealed with (key-checks.ts). */
export interface KeyChecksTable {
  name: string;
  digest: string;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface Database {
  users: UsersTable;
  external_identities: ExternalIdentitiesTable;
  agents: AgentsTable;
  api_keys: ApiKeysTable;
  tool_providers: ToolProvidersTable;
  tool_pins: ToolPinsTable;
  tool_names: ToolNamesTable;
  access_rules: AccessRulesTable;
  credential_providers: CredentialProvidersTable;
  user_credentials: UserCredentialsTable;
  oauth_flows: OAuthFlowsTable;
  oauth_signing_keys: OAuthSigningKeysTable;
  oauth_models: OAuthModelsTable;
  oauth_consents: OAuthConsentsTable;
  identity_events: IdentityEventsTable;
  oauth_client_agents: OAuthClientAgentsTable;
  confirmations: ConfirmationsTable;
  audit_logs: AuditLogsTable;
  audit_chain: AuditChainTable;
  audit_chain_heads: AuditChainHeadsTable;
  devices: DevicesTable;
  key_checks: KeyChecksTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type AgentRow = Selectable<AgentsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ToolProviderRow = Selectable<ToolProvidersTable>;
export type ToolPinRow = Selectable<ToolPinsTable>;
export type ToolNameRow = Selectable<ToolNamesTable>;
export type AccessRuleRow = Selectable<AccessRulesTable>;
export type CredentialProviderRow = Selectable<CredentialProvidersTable>;
export type UserCredentialRow = Selectable<UserCredentialsTable>;
export type OAuthFlowRow = Selectable<OAuthFlowsTable>;
export type ConfirmationRow = Selectable<ConfirmationsTable>;
export type AuditLogRow = Selectable<AuditLogsTable>;
export type DeviceRow = Selectable<DevicesTable>;
