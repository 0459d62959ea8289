/**
 * When the JWT credentials of an authenticated request expire (epoch ms, the earliest), or null
 * when none carries an `exp` (API keys and runtime tokens do not expire; they are revoked, which
 * the bus announces). A user JWT rides in `Authorization: Bearer`, a session token in
 * `X-Gateway-Session-Token`. Call it only after authentication accepted the request: it reads
 * the claims the verification has already checked, it does not verify them.
 */
export function credentialExpiry(headers: Pick<Headers, 'get'>): number | null {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '')?.[1] ?? null;
  let earliest: number | null = null;
  for (const token of [bearer, headers.get('x-gateway-session-token')]) {
    const exp = token === null ? null : expOf(token);
    if (exp !== null && (earliest === null || exp < earliest)) earliest = exp;
  }
  return earliest;
}

/** A compact JWT's `exp` in ms, or null for anything else (an opaque token, no `exp`). */
function expOf(token: string): number | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : null;
  } catch {
    return null;
  }
}
