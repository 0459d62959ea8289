import { AppError } from '@agentgw/core';

/**
 * The refusals of the OAuth connect flow: each a clear 4xx (or a 502 when the authorization
 * server misbehaves), never a 500, never with a token or code in it.
 */
export const oauthErrors = {
  /** No `state`, an unknown one, one already used, or one past its expiry. */
  stateInvalid: () =>
    new AppError(
      400,
      'OAUTH_STATE_INVALID',
      'Unknown, already used or expired OAuth state; start the connection again',
    ),
  /** The flow was started by another user than the one completing it. */
  userMismatch: () => new AppError(403, 'OAUTH_USER_MISMATCH', 'This OAuth connection was started by another user'),
  /** RFC 9207: the response names another issuer than the one the flow was sent to (mix-up). */
  issuerMismatch: () =>
    new AppError(
      400,
      'OAUTH_ISSUER_MISMATCH',
      'The authorization response comes from another issuer than the one this connection was started with',
    ),
  /** The authorization server answered the authorization request with an error (e.g. access_denied). */
  authorizationDenied: (error: string) =>
    new AppError(400, 'OAUTH_AUTHORIZATION_DENIED', `The authorization server refused: ${error}`, { error }),
  /** The authorization response is malformed (no code, unexpected parameters). */
  responseInvalid: (why: string) =>
    new AppError(400, 'OAUTH_RESPONSE_INVALID', `Invalid authorization response: ${why}`),
  /**
   * The token endpoint refused the code itself (`invalid_grant`: used, expired, issued to another
   * flow or user, or not matching the PKCE verifier): the request's fault, so a 400, not a 502.
   */
  codeRejected: () =>
    new AppError(
      400,
      'OAUTH_CODE_REJECTED',
      'The authorization server refused this authorization code (used, expired or issued for another connection); start the connection again',
    ),
  /** The token endpoint refused or answered something unusable. */
  tokenExchangeFailed: (why: string) =>
    new AppError(502, 'OAUTH_TOKEN_EXCHANGE_FAILED', `The authorization server did not issue a token: ${why}`),
  /** Discovery or another call to the authorization server failed. */
  serverUnreachable: (why: string) =>
    new AppError(502, 'OAUTH_SERVER_ERROR', `The authorization server could not be used: ${why}`),
};
