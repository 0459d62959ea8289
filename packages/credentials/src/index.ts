export { createVault, SEALED_ROWS_TTL_MS } from './vault.js';
export type { CheckResult, CredentialMetadata, ReencryptReport, StoreCredentialInput, Vault, VaultDeps } from './vault.js';
export { directCredentialResolver, httpCredentialResolver, SERVICE_TOKEN_HEADER, VAULT_AUDIENCE } from './credential-resolvers.js';
export type { CredentialResolution, CredentialResolver, HttpCredentialResolverOptions } from './credential-resolvers.js';
export { reencryptAllSecrets } from './reencrypt.js';
export type { ReencryptSummary } from './reencrypt.js';
