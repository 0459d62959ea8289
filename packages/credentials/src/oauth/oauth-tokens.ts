import type { UserCredentialRow } from '@agentgw/db';
import { z } from 'zod';

/** The non-secret facts an OAuth credential row keeps in `metadata` (never a token). */
export interface OAuthRowMetadata {
  providerId: string;
  /** Whether a refresh token is stored (the access token can be renewed without the user). */
  refreshable: boolean;
  status: 'connected' | 'needs_reconnect';
  scope: string | null;
}

/** The secret part, sealed as one JSON value in the row's ciphertext. */
export interface OAuthSecret {
  accessToken: string;
  refreshToken: string | null;
}

const metadataSchema = z.object({
  providerId: z.string(),
  refreshable: z.boolean(),
  status: z.enum(['connected', 'needs_reconnect']),
  scope: z.string().nullable(),
});
const secretSchema = z.object({ accessToken: z.string().min(1), refreshToken: z.string().min(1).nullable() });

/** Whether the row holds an OAuth connection (rather than a JWT or key the user pasted). */
export const isOAuthRow = (row: UserCredentialRow): boolean => row.kind === 'oauth2';

/** The row's OAuth facts; a row whose metadata is not ours reads as not refreshable. */
export function oauthMetadataOf(row: UserCredentialRow): OAuthRowMetadata | null {
  const parsed = metadataSchema.safeParse(row.metadata);
  return parsed.success ? parsed.data : null;
}

export const sealableOAuthSecret = (secret: OAuthSecret): string => JSON.stringify(secret);

/** The tokens of an opened OAuth row, or null when the plaintext is not what the vault sealed. */
export function openOAuthSecret(plaintext: string): OAuthSecret | null {
  try {
    const parsed = secretSchema.safeParse(JSON.parse(plaintext));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
