// Every name is exported explicitly, so the package's surface is visible here and a module's internals stay internal.
export { actingUserOf, hasActingUser, isPersonSignedIn } from './principal.js';
export type {
  ApiKeyPrincipal,
  OAuthGrantClaims,
  OAuthPrincipal,
  PresentedApiKey,
  Principal,
  RuntimeTokenPrincipal,
  SessionTokenPrincipal,
  UserJwtPrincipal,
  UserPrincipal,
} from './principal.js';
export { PERMISSIONS, permissionsOf, ROLE_PERMISSIONS, ROLES } from './permissions.js';
export type { Permission } from './permissions.js';
export {
  API_KEY_PREFIX,
  generateApiKey,
  generateRuntimeToken,
  hashToken,
  RUNTIME_TOKEN_PREFIX,
  sameHash,
  tokenKind,
} from './tokens.js';
export type { GeneratedToken } from './tokens.js';
export { hashPassword, verifyPassword, verifyPasswordOrDummy } from './passwords.js';
export { keyIdOf, open, seal, sealedKeyId } from './aead.js';
export { createKeyring, credentialKeyringFor, secretBoxFor } from './keyring.js';
export type { CredentialKeyConfig, KeyConfig, Keyring, OpenResult, SecretBox, Subkeys } from './keyring.js';
export {
  isAdmin,
  isVisibleTo,
  isWritableBy,
  PRIVATE_SCOPE_PREFIX,
  privateScope,
  tenantScope,
  visibleTenantFilter,
  whereTenantOwned,
  whereTenantVisible,
  writeTenant,
} from './tenancy.js';
export type { TenantFilter } from './tenancy.js';
export { ASYMMETRIC_ALGORITHMS, parseDuration, type TokenType } from './jwt.js';
export {
  ADMIN_CLASS_ROLES,
  SESSION_TOKEN_LIFETIME_SECONDS,
  sessionRoles,
  type SessionClaims,
  type SessionTokenInput,
} from './session-token.js';
export { createAuth } from './service.js';
export type { AuthService, CreateAuthOptions, ExternalPerson } from './service.js';
export { API_KEY_USE_RECORD_INTERVAL_MS, assertAgentActive, bearerToken } from './credential-forms.js';
export type { AuthMode } from './credential-forms.js';
export { databaseAgentIdentities } from './identity-cache.js';
export type { AgentIdentities, AgentIdentity } from './identity-cache.js';
export { CONFIRMATION_TOKEN_LIFETIME_SECONDS, SERVICE_TOKEN_LIFETIME_SECONDS } from './token-issuing.js';
export type { ConfirmationClaims, TokenIssuing } from './token-issuing.js';
export {
  flexibleAuth,
  jwtAuth,
  requestUserToken,
  requireApiKeyScope,
  requirePermission,
  requireRole,
} from './middleware.js';
export {
  assertSameOrigin,
  clearConsoleSession,
  CONSOLE_COOKIE,
  consoleSessionToken,
  isHttpsRequest,
  setConsoleSession,
} from './console-session.js';
export type { FlexibleAuthOptions } from './middleware.js';
export {
  isMcpEndpointPath,
  isMcpResource,
  MCP_PROXY_PREFIX,
  MCP_SCOPE,
  MCP_UNIFIED_PATH,
  mcpProxyProviderOf,
} from './mcp-resource.js';
export {
  ALL_CLIENTS,
  isOAuthAccessToken,
  OAUTH_ACCESS_TOKEN_TYP,
  OAUTH_SIGNING_ALG,
  oauthIssuerOf,
  storedOAuthPublicKeys,
} from './oauth-access-tokens.js';
export { loadOAuthSigningKeys } from './oauth-signing-keys.js';
