export * from './principal.js';
export * from './permissions.js';
export * from './tokens.js';
export * from './passwords.js';
export * from './aead.js';
export * from './keyring.js';
export * from './tenancy.js';
export { ASYMMETRIC_ALGORITHMS, parseDuration, type TokenType } from './jwt.js';
export {
  SESSION_TOKEN_LIFETIME_SECONDS,
  type SessionClaims,
  type SessionTokenInput,
} from './session-token.js';
export * from './service.js';
export * from './middleware.js';
