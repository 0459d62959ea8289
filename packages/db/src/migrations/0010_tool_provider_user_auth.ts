import { sql, type Kysely } from 'kysely';

const oneOf = (column: string, values: readonly string[]) =>
  sql`${sql.ref(column)} in (${sql.join(values.map((v) => sql.lit(v)))})`;

/**
 * Tool providers reached as the user (issue 22.4): `auth_type` `user_oauth` sends the calling
 * user's OAuth access token of `credential_service_type` (from the vault) as the bearer token,
 * `user_key` that user's stored key of that service type as X-Api-Key. The values are spelled
 * out (not imported) so this migration never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tool_providers').dropConstraint('tool_providers_auth_type_check').execute();
  await db.schema
    .alterTable('tool_providers')
    .addCheckConstraint(
      'tool_providers_auth_type_check',
      oneOf('auth_type', ['bearer', 'api_key', 'none', 'user_oauth', 'user_key']),
    )
    .execute();
  await db.schema.alterTable('tool_providers').addColumn('credential_service_type', 'text').execute();
  // A per-user auth type names the service type whose credential it sends.
  await db.schema
    .alterTable('tool_providers')
    .addCheckConstraint(
      'tool_providers_user_auth_check',
      sql`auth_type not in ('user_oauth', 'user_key') or credential_service_type is not null`,
    )
    .execute();
}
