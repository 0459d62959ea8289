import { sql, type Kysely } from 'kysely';

/**
 * Confirmation carriers (issue 34): a rule may let its held calls be confirmed in the caller's own
 * MCP client (`access_rules.confirm_carriers`, null = console and push), and a decided
 * confirmation remembers the carrier its answer came through and, from a client, the OAuth
 * client that answered.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('access_rules')
    .addColumn('confirm_carriers', sql`text[]`)
    .execute();
  await db.schema
    .alterTable('access_rules')
    .addCheckConstraint(
      'access_rules_confirm_carriers_check',
      sql`confirm_carriers <@ array['console', 'client', 'push']::text[]`,
    )
    .execute();
  await db.schema.alterTable('confirmations').addColumn('decided_via', 'text').execute();
  await db.schema.alterTable('confirmations').addColumn('decided_client_id', 'text').execute();
  await db.schema
    .alterTable('confirmations')
    .addCheckConstraint('confirmations_decided_via_check', sql`decided_via in ('console', 'client', 'push')`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('confirmations').dropColumn('decided_via').dropColumn('decided_client_id').execute();
  await db.schema.alterTable('access_rules').dropColumn('confirm_carriers').execute();
}
