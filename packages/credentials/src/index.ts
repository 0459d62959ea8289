export { createVault, SEALED_ROWS_TTL_MS } from './vault.js';
export type {
  CheckResult,
  CredentialMetadata,
  ReencryptReport,
  StoreCredentialInput,
  StoreOAuthInput,
  Vault,
  VaultDeps,
  CredentialResolution,
} from './vault.js';
export {
  directCredentialResolver,
  httpCredentialResolver,
  SERVICE_TOKEN_HEADER,
  VAULT_AUDIENCE,
} from './credential-resolvers.js';
export type { CredentialResolver, HttpCredentialResolverOptions } from './credential-resolvers.js';
export type { CredentialRecipient, ReleaseCase, UpstreamRecipient } from './credential-recipients.js';
export { reencryptAllSecrets } from './reencrypt.js';
export type { ReencryptSummary } from './reencrypt.js';
export { createVaultOAuth } from './oauth/vault-oauth.js';
export type { VaultOAuth } from './oauth/vault-oauth.js';
export { createOAuthConnect } from './oauth/oauth-connect.js';
export { boundedFetch } from './oauth/bounded-fetch.js';
export type { OAuthConnect, OAuthConnectDeps } from './oauth/oauth-connect.js';
export { MemoryRefreshLock, RedisRefreshLock } from './oauth/refresh-lock.js';
export type { RefreshLock, RedisRefreshLockOptions } from './oauth/refresh-lock.js';
export { REFRESH_BEFORE_EXPIRY_MS } from './oauth/oauth-credentials.js';
export { OAUTH_FLOW_TTL_MS } from './oauth/oauth-flows.js';
export { createTokenExchange, TOKEN_EXCHANGE_GRANT, TokenExchange } from './oauth/token-exchange.js';
export type { SubjectToken, SubjectTokenType } from './oauth/exchange-subjects.js';
export type { TokenExchangeConfig } from './oauth/token-exchange.js';
export { MINTED_SUBJECT_LIFETIME_S } from './oauth/exchange-subjects.js';
export type { ExchangeCaller, ExchangeServer, ExchangeSubjects } from './oauth/exchange-subjects.js';
export {
  acceptsClientMetadataDocuments,
  discoverMcpUpstream,
  registerGatewayClient,
  resourceMetadataUrlOf,
  upstreamProviderConfig,
} from './oauth/mcp-upstream-discovery.js';
export type {
  DiscoveredUpstream,
  UpstreamClient,
  UpstreamClientRegistration,
  UpstreamProviderConfig,
} from './oauth/mcp-upstream-discovery.js';
export {
  redirectUriFor,
  UPSTREAM_CLIENT_DOCUMENT_PATH,
  upstreamClientDocument,
  upstreamClientDocumentUrl,
} from './oauth/upstream-client-document.js';
export { setUpMcpUpstreamAuth } from './oauth/mcp-upstream-setup.js';
export type { ManualUpstreamClient } from './oauth/mcp-upstream-setup.js';
export { AuthorizationServers } from './oauth/authorization-server.js';
