/** SQLSTATE 23505; both pg and PGlite put the code on the thrown error. */
export const isUniqueViolation = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
