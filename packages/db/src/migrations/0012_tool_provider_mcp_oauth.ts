import { sql, type Kysely } from 'kysely';

const oneOf = (column: string, values: readonly string[]) =>
  sql`${sql.ref(column)} in (${sql.join(values.map((v) => sql.lit(v)))})`;

/**
 * `auth_type` `mcp_oauth` (issue 22.5): the upstream is an MCP server protected by the MCP
 * authorization spec; the gateway discovered it and registered as its client, saved as an oauth2
 * credential provider of the derived `credential_service_type`, and each call carries the calling
 * user's token of it. The values are spelled out (not imported) so this migration never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tool_providers').dropConstraint('tool_providers_auth_type_check').execute();
  await db.schema
    .alterTable('tool_providers')
    .addCheckConstraint(
      'tool_providers_auth_type_check',
      oneOf('auth_type', ['bearer', 'api_key', 'none', 'user_oauth', 'user_key', 'mcp_oauth']),
    )
    .execute();
  await db.schema.alterTable('tool_providers').dropConstraint('tool_providers_user_auth_check').execute();
  await db.schema
    .alterTable('tool_providers')
    .addCheckConstraint(
      'tool_providers_user_auth_check',
      sql`auth_type not in ('user_oauth', 'user_key', 'mcp_oauth') or credential_service_type is not null`,
    )
    .execute();
}
