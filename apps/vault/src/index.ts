export { createApp } from './app.js';
export { createVault, reencryptAll } from './vault.js';
export type { CheckResult, CredentialMetadata, ReencryptReport, StoreCredentialInput, Vault, VaultDeps } from './vault.js';
export { directCredentialResolver, httpCredentialResolver } from './credential-resolvers.js';
export type { HttpCredentialResolverOptions } from './credential-resolvers.js';
export { SERVICE_TOKEN_HEADER, VAULT_AUDIENCE } from './internal.routes.js';
