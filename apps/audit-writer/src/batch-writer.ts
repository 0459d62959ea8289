import { cleanString } from '@agentgw/audit';
import { isUniqueViolation, textArrayBytes, type AuditChainTable, type Database } from '@agentgw/db';
import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { RowPatch, ValidJob } from './audit-job.js';
import { mergeJobs } from './audit-job.js';
import { CONTENT_SQL, contentHash, GENESIS_HASH, linkHash, tenantKeyOf } from './chain.js';

/**
 * A placeholder's created_at until its create arrives: queries keep `created_at > '-infinity'`,
 * a condition every query index (…, created_at) answers by itself, so counts stay index-only.
 */
export const PLACEHOLDER_CREATED_AT = '-infinity';

/** What the upsert reports per row: enough to chain it (`content`: the text its content hash is taken over). */
interface WrittenRow {
  id: string;
  tenant_id: string | null;
  tool_name: string | null;
  content: string;
}

/** What a written batch amounted to. */
export interface BatchOutcome {
  /** Jobs skipped because a delivery of them was already written. */
  duplicates: number;
  /** Rows inserted or updated. */
  rows: number;
  /** Rows still waiting for their create (placeholders). */
  placeholders: number;
  links: number;
}

/**
 * Writes a batch of audit jobs in one transaction: merges them per audit id (a second delivery
 * within the batch dropped), upserts the rows with the order-independent merge rule, then appends
 * one chain link per job to its row's tenant chain. A job written before (a redelivery, or one
 * raced in by another writer) fails the link's unique job key and rolls the transaction back; the
 * batch is then written again without the jobs already written. Looking their keys up first would
 * cost every batch a statement (an index probe per job) for what is rare: a queue redelivery.
 */
export async function writeBatch(db: Kysely<Database>, jobs: readonly ValidJob[]): Promise<BatchOutcome> {
  if (jobs.length === 0) return { duplicates: 0, rows: 0, placeholders: 0, links: 0 };
  try {
    return await writeOnce(db, jobs, NONE_WRITTEN);
  } catch (err) {
    // Here a link whose job key is already in a chain.
    if (!isUniqueViolation(err)) throw err;
    return writeOnce(db, jobs, writtenBefore);
  }
}

// The per-row callbacks of a batch are module-level functions, not arrows made inside each
// batch: under load V8 compiled each such arrow again every second or two (`--trace-opt`; its
// optimised code goes once no closure holds it), ~5 % of the all-in-one's CPU per call.
// docs/benchmarks.md, twenty-seventh pass.

/** The keys of these jobs already in a chain. */
type WrittenKeys = (trx: Transaction<Database>, jobs: readonly ValidJob[]) => Promise<Set<string>>;

const NONE_WRITTEN: WrittenKeys = async () => new Set();

const keyOf = (job: ValidJob): string => job.key;

const writtenBefore: WrittenKeys = async (trx, jobs) => {
  const keys = [...new Set(jobs.map(keyOf))];
  const known = await sql<{
    job_key: string;
  }>`select job_key from audit_chain where job_key = any(${textArrayBytes(keys)}::text[])`.execute(trx);
  return new Set(known.rows.map((r) => r.job_key));
};

/** One attempt: every statement in one transaction, without the jobs `skipped` finds written. */
function writeOnce(db: Kysely<Database>, jobs: readonly ValidJob[], skipped: WrittenKeys): Promise<BatchOutcome> {
  // The callback made per batch stays one line: V8 recompiles such a closure under load (ab --trace-opt).
  return db.transaction().execute((trx) => writeIn(trx, jobs, skipped));
}

/** The statements of one attempt inside its transaction. */
async function writeIn(
  trx: Transaction<Database>,
  jobs: readonly ValidJob[],
  skipped: WrittenKeys,
): Promise<BatchOutcome> {
  const fresh = unwritten(jobs, await skipped(trx, jobs));
  const patches = mergeJobs(fresh);
  const written: (WrittenRow & { keys: string[] })[] = [];
  if (patches.length > 0) {
    const keysById = new Map(patches.map(keysEntry));
    for (const row of await upsertRows(trx, patches)) written.push({ ...row, keys: keysById.get(row.id) ?? [] });
  }
  const chained = written.filter(isChained);
  const links = await appendLinks(trx, chained);
  return {
    duplicates: jobs.length - fresh.length,
    rows: written.length,
    placeholders: written.length - chained.length,
    links,
  };
}

/** The jobs not in `seen`, a second delivery within the batch dropped too (`seen` takes their keys). */
function unwritten(jobs: readonly ValidJob[], seen: Set<string>): ValidJob[] {
  const fresh: ValidJob[] = [];
  for (const job of jobs) {
    if (seen.has(job.key)) continue;
    seen.add(job.key);
    fresh.push(job);
  }
  return fresh;
}

const keysEntry = (patch: RowPatch): [string, string[]] => [patch.id, patch.keys];

/** A row with its create is chained; a placeholder waits for it. */
const isChained = (row: WrittenRow): boolean => row.tool_name !== null;

/** `excluded.<field>` wins when its version is newer (byte order, as in JS) than the stored one. */
const newerWins = (field: string, alongside: readonly string[] = []) => {
  const v = sql.raw(`${field}_v`);
  const cond = sql`excluded.${v} is not null and (audit_logs.${v} is null or excluded.${v} collate "C" > audit_logs.${v} collate "C")`;
  const take = (column: string) => {
    const f = sql.raw(column);
    return sql`${f} = case when ${cond} then excluded.${f} else audit_logs.${f} end`;
  };
  return sql.join([...[field, ...alongside].map(take), take(`${field}_v`)]);
};

/** A create's fields complete a placeholder and are never changed afterwards. */
const fromCreate = (field: string) => {
  const f = sql.raw(field);
  return sql`${f} = case when audit_logs.tool_name is null and excluded.tool_name is not null then excluded.${f} else audit_logs.${f} end`;
};

/** The merge rule against the stored row: the same SQL for every batch, so built once. */
const MERGE_SET = sql.join([
  ...[
    'user_id',
    'agent_id',
    'end_user_id',
    'provider_id',
    'tenant_id',
    'oauth_client_id',
    'arguments',
    'created_at',
  ].map(fromCreate),
  sql`tool_name = coalesce(audit_logs.tool_name, excluded.tool_name)`,
  ...['status', 'result', 'duration', 'confirmed_by', 'error'].map((field) => newerWins(field)),
  newerWins('decided_via', ['decided_client_id']),
  sql`updated_at = excluded.updated_at`,
]);

/**
 * A text column's value as PostgreSQL takes it inside a JSON document: NUL and lone surrogates
 * become U+FFFD, not a refused batch; no value leaves the key out (NULL, and less to parse).
 */
const text = (value: string | null | undefined): string | undefined => (value == null ? undefined : cleanString(value));

/**
 * The batch's rows without their bodies as one JSON document for `json_to_recordset`: one
 * parameter whatever the number of rows, its fields short and parsed once.
 */
function rowsDocument(patches: readonly RowPatch[]): string {
  return JSON.stringify(patches.map(documentRow));
}

/** One patch's fields in the rows document. */
function documentRow(p: RowPatch) {
  return {
    id: p.id,
    user_id: text(p.create?.userId),
    agent_id: text(p.create?.agentId),
    end_user_id: text(p.create?.endUserId),
    provider_id: text(p.create?.providerId),
    tenant_id: text(p.create?.tenantId),
    oauth_client_id: text(p.create?.oauthClientId),
    tool_name: text(p.create?.toolName),
    created_at: p.create?.createdAt ?? PLACEHOLDER_CREATED_AT,
    status: p.status?.value ?? 'pending',
    status_v: text(p.status?.version),
    result_v: text(p.result?.version),
    duration: p.duration?.value ?? undefined,
    duration_v: text(p.duration?.version),
    confirmed_by: text(p.confirmedBy?.value),
    confirmed_by_v: text(p.confirmedBy?.version),
    error: text(p.error?.value),
    error_v: text(p.error?.version),
    decided_via: p.decidedVia?.value.carrier,
    decided_client_id: text(p.decidedVia?.value.clientId),
    decided_via_v: text(p.decidedVia?.version),
  };
}

/** A body as the JSON text its `json` column keeps (0018); none (or JSON null) is NULL, as before. */
const bodyText = (body: unknown): string | null => (body == null ? null : JSON.stringify(body));
const argumentsText = (p: RowPatch) => bodyText(p.create?.arguments);
const resultText = (p: RowPatch) => bodyText(p.result?.value);

/**
 * Upserts the rows. The bodies go beside the document as two text arrays, zipped with its rows by
 * position (`rows from`), and are parsed once, by their `json` cast. Inside the document the
 * engine parsed each body three times (the document's cast, the recordset, the column's input):
 * 50–80 µs of the embedded engine's CPU a call with 2 KB bodies. The arrays go in binary format
 * to both engines (textArrayBytes): as a literal the embedded engine's array parser took ~8× longer.
 */
async function upsertRows(trx: Transaction<Database>, patches: readonly RowPatch[]): Promise<WrittenRow[]> {
  const result = await sql<WrittenRow>`
    insert into audit_logs (id, user_id, agent_id, end_user_id, provider_id, tenant_id, oauth_client_id, tool_name, arguments, created_at,
      status, status_v, result, result_v, duration, duration_v, confirmed_by, confirmed_by_v, error, error_v,
      decided_via, decided_client_id, decided_via_v, updated_at)
    select id, user_id, agent_id, end_user_id, provider_id, tenant_id, oauth_client_id, tool_name, arguments::json, created_at,
      status, status_v, result::json, result_v, duration, duration_v, confirmed_by, confirmed_by_v, error, error_v,
      decided_via, decided_client_id, decided_via_v, now()
    from rows from (
      json_to_recordset(${rowsDocument(patches)}::text::json) as (id text, user_id text, agent_id text, end_user_id text,
        provider_id text, tenant_id text, oauth_client_id text, tool_name text, created_at timestamptz,
        status text, status_v text, result_v text, duration integer, duration_v text, confirmed_by text,
        confirmed_by_v text, error text, error_v text, decided_via text, decided_client_id text, decided_via_v text),
      unnest(${textArrayBytes(patches.map(argumentsText))}::text[]),
      unnest(${textArrayBytes(patches.map(resultText))}::text[])
    ) as t(id, user_id, agent_id, end_user_id, provider_id, tenant_id, oauth_client_id, tool_name, created_at,
      status, status_v, result_v, duration, duration_v, confirmed_by, confirmed_by_v, error, error_v,
      decided_via, decided_client_id, decided_via_v, arguments, result)
    on conflict (id) do update set ${MERGE_SET}
    returning id, tenant_id, tool_name, ${CONTENT_SQL} as content`.execute(trx);
  return result.rows;
}

/** A table's text columns, so a column that is not text cannot be sent as a text array. */
type TextColumn<T> = { [K in keyof T]-?: T[K] extends string ? K : never }[keyof T];

type Link = Insertable<AuditChainTable>;

/** One text column of the links, as a binary text array. */
function textColumn(links: readonly Link[], k: TextColumn<AuditChainTable>): Uint8Array {
  const values: string[] = [];
  for (const link of links) values.push(link[k]);
  return textArrayBytes(values);
}

const seqOf = (link: Link): number => link.seq;
const tenantOfRow = (row: WrittenRow): string => tenantKeyOf(row.tenant_id);

/**
 * Appends one link per job to each row's tenant chain. The chains' heads are locked (in tenant
 * order, so two writers cannot deadlock) for the rest of the transaction: links of one chain
 * are appended by one writer at a time, in commit order.
 */
async function appendLinks(
  trx: Transaction<Database>,
  rows: readonly (WrittenRow & { keys: string[] })[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const tenants = [...new Set(rows.map(tenantOfRow))].sort();
  // One statement creates a missing head and locks every head (an update locks its row as FOR
  // UPDATE would, in VALUES order: sorted, so two writers cannot deadlock), returning where each
  // chain stands now; the no-op update keeps the head as it is.
  const { rows: heads } = await sql<{ tenant_key: string; seq: string | number; hash: string }>`
    insert into audit_chain_heads (tenant_key, seq, hash, pruned_hash)
    select t, 0, ${GENESIS_HASH}, ${GENESIS_HASH} from unnest(${textArrayBytes(tenants)}::text[]) as t
    on conflict (tenant_key) do update set seq = audit_chain_heads.seq
    returning tenant_key, seq, hash`.execute(trx);
  const head = new Map(heads.map((h) => [h.tenant_key, { seq: Number(h.seq), hash: h.hash }]));
  const links: Link[] = [];
  for (const row of rows) {
    const tenantKey = tenantKeyOf(row.tenant_id);
    const at = head.get(tenantKey);
    if (at === undefined) throw new Error(`audit chain: no head row for tenant ${tenantKey}`);
    const hash = contentHash(row.content);
    for (const jobKey of row.keys) {
      const link = { tenantKey, seq: at.seq + 1, auditId: row.id, jobKey, contentHash: hash, prevHash: at.hash };
      const own = linkHash(link);
      links.push({
        tenant_key: tenantKey,
        seq: link.seq,
        audit_id: row.id,
        job_key: jobKey,
        content_hash: hash,
        prev_hash: link.prevHash,
        hash: own,
      });
      at.seq = link.seq;
      at.hash = own;
    }
  }
  const texts = (k: TextColumn<AuditChainTable>) => textColumn(links, k);
  const moved = [...head];
  // The links and the heads' new positions in one statement (a data-modifying WITH always runs);
  // arrays keep the text the same whatever the batch, so the embedded engine keeps it parsed; the
  // text arrays go in binary format (textArrayBytes), no literal to escape and parse.
  await sql`with appended as (
      insert into audit_chain (tenant_key, seq, audit_id, job_key, content_hash, prev_hash, hash)
      select * from unnest(${texts('tenant_key')}::text[], ${links.map(seqOf)}::bigint[], ${texts('audit_id')}::text[],
        ${texts('job_key')}::text[], ${texts('content_hash')}::text[], ${texts('prev_hash')}::text[], ${texts('hash')}::text[]))
    update audit_chain_heads as h set seq = v.seq, hash = v.hash
    from unnest(${textArrayBytes(moved.map(([t]) => t))}::text[], ${moved.map(([, at]) => at.seq)}::bigint[],
      ${textArrayBytes(moved.map(([, at]) => at.hash))}::text[]) as v(tenant_key, seq, hash)
    where h.tenant_key = v.tenant_key`.execute(trx);
  return links.length;
}
