import { sql, type Kysely } from 'kysely';

const oneOf = (column: string, values: readonly string[]) =>
  sql`${sql.ref(column)} in (${sql.join(values.map((v) => sql.lit(v)))})`;

/**
 * `auth_type` `token_exchange` (issue 22, RFC 8693): each call exchanges the caller's own sign-in
 * token at the provider's authorization server for an upstream token. `token_exchange` holds where
 * and for what (token URL or issuer, client id, audience, resource, scope); the client secret is
 * sealed in `auth_secret_enc` like other provider secrets. The values are spelled out (not imported)
 * so this migration never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tool_providers').dropConstraint('tool_providers_auth_type_check').execute();
  await db.schema
    .alterTable('tool_providers')
    .addCheckConstraint(
      'tool_providers_auth_type_check',
      oneOf('auth_type', ['bearer', 'api_key', 'none', 'user_oauth', 'user_key', 'mcp_oauth', 'token_exchange']),
    )
    .execute();
  await db.schema.alterTable('tool_providers').addColumn('token_exchange', 'jsonb').execute();
  await db.schema
    .alterTable('tool_providers')
    .addCheckConstraint(
      'tool_providers_token_exchange_check',
      sql`auth_type <> 'token_exchange' or token_exchange is not null`,
    )
    .execute();
}
