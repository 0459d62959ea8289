import { performance } from 'node:perf_hooks';
import { Client } from 'undici';
import type { LoadResult } from './load-run.js';
import { nearestRank } from './nearest-rank.js';

/** At most this many latencies are kept (one per call); a faster target's further calls still count. */
const MAX_SAMPLES = 1_000_000;

/**
 * One connection, one call at a time, for `seconds`: each call's time from sending the request to
 * its response's last byte, kept to the microsecond. autocannon's histogram keeps whole
 * milliseconds, which cannot tell the "+1 ms p50 at one connection" from 0 or 2.
 */
export async function sequentialLoad(
  url: string,
  seconds: number,
  headers: Record<string, string>,
  body: string,
): Promise<LoadResult> {
  const { origin, pathname, search } = new URL(url);
  const client = new Client(origin, { pipelining: 1 });
  const latencies: number[] = [];
  let total = 0;
  let errors = 0;
  let non2xx = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  try {
    while (performance.now() < until) {
      const sent = performance.now();
      try {
        const answer = await client.request({ method: 'POST', path: `${pathname}${search}`, headers, body });
        await answer.body.arrayBuffer();
        if (answer.statusCode < 200 || answer.statusCode > 299) non2xx += 1;
        if (latencies.length < MAX_SAMPLES) latencies.push(performance.now() - sent);
        total += 1;
      } catch {
        errors += 1;
      }
    }
  } finally {
    await client.close();
  }
  latencies.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    rps: (total * 1000) / (performance.now() - started),
    p50: round(nearestRank(latencies, 50)),
    p99: round(nearestRank(latencies, 99)),
    errors,
    non2xx,
    total,
  };
}
