/**
 * `work`'s value, or 'late' once `ms` have passed; the work itself is left running. Shutdown paths
 * use it where a dependency can wait for good (a Redis Cluster connection that never ends).
 */
export async function settleWithin<T>(work: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, ms))));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
