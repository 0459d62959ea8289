/**
 * Value for a jsonb column. pg would send a JS array as a Postgres array and PGlite would
 * guess a type, so jsonb is always written as its JSON text (undefined becomes JSON null).
 */
export const json = (value: unknown): string => JSON.stringify(value) ?? 'null';
