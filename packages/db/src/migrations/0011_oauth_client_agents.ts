import { sql, type Kysely } from 'kysely';

/**
 * An admin's binding of a user's MCP client (or every client of that user, client_id `*`) to an
 * agent (issue 23): calls with that client's OAuth tokens then run under the agent's rules,
 * with the user as end user. One binding per user and client.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_client_agents')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('oauth_client_agents_pk', ['user_id', 'client_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_client_agents').execute();
}
