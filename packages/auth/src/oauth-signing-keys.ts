import { randomUUID } from 'node:crypto';
import type { Database } from '@agentgw/db';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { SecretBox } from './keyring.js';
import { OAUTH_SIGNING_ALG } from './oauth-access-tokens.js';

/** Sealed private keys are bound to their row by this additional data. */
const aadOf = (kid: string) => `oauth_signing_keys:${kid}`;

/**
 * The authorization server's signing keys: the first process to need one (admin-api's
 * authorization server, or mcp-gateway minting a token exchange's subject token) creates an ES256
 * key (private half sealed under the platform key); every process signs with the oldest one and
 * mcp-gateway verifies against the public halves. Answers the private JWKs, oldest first.
 */
export async function loadOAuthSigningKeys(db: Kysely<Database>, box: SecretBox): Promise<JWK[]> {
  let rows = await db
    .selectFrom('oauth_signing_keys')
    .select(['kid', 'private_jwk_sealed'])
    .orderBy('created_at')
    .orderBy('kid')
    .execute();
  if (rows.length === 0) {
    const kid = randomUUID();
    const { publicKey, privateKey } = await generateKeyPair(OAUTH_SIGNING_ALG, { extractable: true });
    const common = { kid, alg: OAUTH_SIGNING_ALG, use: 'sig' };
    const publicJwk = { ...(await exportJWK(publicKey)), ...common };
    const privateJwk = { ...(await exportJWK(privateKey)), ...common };
    await db
      .insertInto('oauth_signing_keys')
      .values({
        kid,
        public_jwk: JSON.stringify(publicJwk),
        private_jwk_sealed: box.seal(JSON.stringify(privateJwk), aadOf(kid)),
      })
      .execute();
    rows = await db
      .selectFrom('oauth_signing_keys')
      .select(['kid', 'private_jwk_sealed'])
      .orderBy('created_at')
      .orderBy('kid')
      .execute();
  }
  return rows.map((row) => {
    const opened = box.open(row.private_jwk_sealed, aadOf(row.kid));
    if (opened === null)
      throw new Error(`OAuth signing key ${row.kid} does not open under the configured PLATFORM_SECRETS_KEY`);
    return JSON.parse(opened) as JWK;
  });
}
