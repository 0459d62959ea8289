import { sql, type Kysely } from 'kysely';

/**
 * External identities: a token from an external issuer (or JWT_PUBLIC_KEY) maps to a local user
 * by `(issuer, subject)`, never by a `sub` that merely equals a local id, and by email only when
 * the issuer vouched for it (`email_verified: true`), which records the link here.
 *
 * `users.password_changed_at`: login tokens issued before it are refused, so changing a password
 * ends every existing session.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('external_identities')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('external_identities_pkey', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('external_identities_user_id_idx').on('external_identities').column('user_id').execute();
  await db.schema.alterTable('users').addColumn('password_changed_at', 'timestamptz').execute();
}
