// Shapes of the public API the console reads: generated from /api/v1/openapi.json into
// api-types.gen.ts (`pnpm generate:api-types`), named here; the shared vocabularies come from
// their one declaration in @agentgw/core/enums.
import type { components, paths } from './api-types.gen.js';

type Schemas = components['schemas'];
/** The JSON body of a GET path's 200 answer. */
type Ok<P extends keyof paths> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': infer B } } } };
}
  ? B
  : never;

export { AUDIT_STATUSES, CONFIRMATION_STATUSES, RISK_LEVELS } from '@agentgw/core/enums';
export type { AuditStatus, ConfirmationStatus, PolicyAction, RiskLevel } from '@agentgw/core/enums';

/** A user role. */
export type Role = Schemas['Role'];
/** The signed-in user, as the login response's `user`. */
export type SessionUser = Schemas['AccountUser'];
/** A credential an agent needs before it can be invoked. */
export type RequiredCredential = Schemas['RequiredCredential'];
/** An agent as admin-api returns it. */
export type Agent = Schemas['Agent'];
/** How the gateway authenticates to a tool provider. */
export type ToolProviderAuthType = Schemas['ToolProviderAuthType'];
/** A tool provider (an upstream MCP server). */
export type ToolProvider = Schemas['ToolProvider'];
/** A tool a provider lists. */
export type UpstreamTool = Schemas['UpstreamTool'];
/** Every routable provider's tools under the names clients see, and the providers that list per user. */
export type ExposedToolsReport = Ok<'/api/v1/mcp/exposed-tools'>;
/** The tool-collisions report: names offered by more than one provider, and how each is exposed. */
export type ToolCollisionsReport = Ok<'/api/v1/mcp/tool-collisions'>;
/** One provider's exposed name for a colliding upstream tool name. */
export type ToolCollision = Schemas['ToolCollision'];
/** An access rule. */
export type AccessRule = Schemas['AccessRule'];
/** The dry run's answer: what the policy would do with a call. */
export type PolicyDecision = Schemas['PolicyDecision'];
/** What an API key may do. */
export type ApiKeyScope = Schemas['ApiKeyScope'];
/** The scopes offered when creating a key. */
export const API_KEY_SCOPES: ApiKeyScope[] = ['credentials:resolve', 'credentials:read', 'credentials:write'];
/** An API key (never its secret). */
export type ApiKey = Schemas['ApiKey'];
/** How a credential provider authenticates. */
export type CredentialAuthType = Schemas['CredentialAuthType'];
/** A credential provider. */
export type CredentialProvider = Schemas['CredentialProvider'];
/** A stored credential's metadata (never the secret). */
export type StoredCredential = Schemas['CredentialMetadata'];
/** A registered push device. */
export type Device = Schemas['Device'];
/** One audit log entry. */
export type AuditEntry = Schemas['AuditEntry'];
/** A page of audit entries. */
export type AuditPage = Ok<'/api/v1/audit/logs'>;
/** Counts per status and the mean duration of a filtered set. */
export type AuditStats = Ok<'/api/v1/audit/stats'>['data'];
/** A page of identity events (sign-ins, consents, grants, connected accounts, token exchanges). */
export type IdentityEventsPage = Ok<'/api/v1/audit/identity-events'>;
/** One identity event type, as the query's `type` filter takes it. */
export type IdentityEventType = NonNullable<
  NonNullable<paths['/api/v1/audit/identity-events']['get']['parameters']['query']>['type']
>;

/** A tool's pinned and quarantined definitions with their diff (admin API, issue 24.3). */
export type ToolPin = Schemas['ToolPin'];
/** A provider's pinning mode. */
export type ProviderPinning = Schemas['ProviderPinning'];
export type ToolPinningMode = Schemas['ToolPinningMode'];
