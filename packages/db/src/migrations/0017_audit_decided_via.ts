import { sql, type Kysely } from 'kysely';

/**
 * A held call's audit record names how its confirmation was answered (issue 34): the carrier
 * (console, client or push) and, from the person's own MCP client, the OAuth client that answered;
 * both set together by one versioned update (`decided_via_v`), as the writer merges every field.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('audit_logs')
    .addColumn('decided_via', 'text')
    .addColumn('decided_client_id', 'text')
    .addColumn('decided_via_v', 'text')
    .execute();
  await db.schema
    .alterTable('audit_logs')
    .addCheckConstraint('audit_logs_decided_via_check', sql`decided_via in ('console', 'client', 'push')`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('audit_logs')
    .dropColumn('decided_via')
    .dropColumn('decided_client_id')
    .dropColumn('decided_via_v')
    .execute();
}
