import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';

/** Who an access token is minted for, and where it is good: the issuer (GATEWAY_PUBLIC_URL) and the MCP endpoint's resource. */
export interface MintedToken {
  issuer: string;
  resource: string;
  userId: string;
  clientId: string;
}

/**
 * An OAuth access token of the gateway's authorization server as the replicas verify it (RFC 9068
 * `at+jwt`, ES256, a key in `oauth_signing_keys`, a live grant), without the browser sign-in: the
 * distributed test runs no authorization server, yet its held calls need a person signed in by OAuth.
 */
export async function mintOAuthAccessToken(db: Kysely<Database>, who: MintedToken): Promise<string> {
  const kid = `test-${randomUUID()}`;
  const grantId = randomUUID();
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' };
  await db
    .insertInto('oauth_signing_keys')
    .values({ kid, public_jwk: JSON.stringify(publicJwk), private_jwk_sealed: 'unused by the verifier' })
    .execute();
  await db
    .insertInto('oauth_models')
    .values({
      model: 'Grant',
      id: grantId,
      payload: JSON.stringify({ clientId: who.clientId }),
      account_id: who.userId,
    })
    .execute();
  const now = Math.floor(Date.now() / 1000);
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signed = `${encode({ alg: 'ES256', typ: 'at+jwt', kid })}.${encode({
    iss: who.issuer,
    aud: who.resource,
    sub: who.userId,
    client_id: who.clientId,
    gid: grantId,
    scope: 'mcp',
    jti: randomUUID(),
    iat: now,
    exp: now + 3600,
  })}`;
  const signature = sign('sha256', Buffer.from(signed), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${signed}.${signature.toString('base64url')}`;
}
