import { sql, type Kysely } from 'kysely';

/**
 * Audit bodies kept as the JSON text the writer sent (`json`) instead of `jsonb` (issue 32): the
 * row's content hash was taken over `jsonb_build_array(...)::text`, which rendered both bodies back
 * out of jsonb on every write, ~40 % of a 2 KB call's upsert in the embedded engine
 * (docs/benchmarks.md, twentieth pass); `json_build_array` takes the stored text as it is. The
 * cast writes each existing body as jsonb's text, and `json_build_array` over that text renders
 * exactly what `jsonb_build_array` rendered, so rows hashed before still verify.
 *
 * On PostgreSQL the type change rewrites `audit_logs` under an exclusive lock: audit writes wait
 * for it (the queue keeps their jobs), for a time that grows with the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table audit_logs
    alter column arguments type json using arguments::json,
    alter column result type json using result::json`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Rows written since hash their bodies' text as sent; as jsonb they may no longer verify.
  await sql`alter table audit_logs
    alter column arguments type jsonb using arguments::jsonb,
    alter column result type jsonb using result::jsonb`.execute(db);
}
