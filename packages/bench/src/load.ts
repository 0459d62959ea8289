import autocannon from 'autocannon';
import { sequentialLoad } from './sequential-load.js';

// The load generator, in its own process: one run against one URL, the result as one JSON line.
// Several connections: autocannon. One connection: one call at a time, timed to the microsecond
// (the latency aims are at one connection, and autocannon keeps whole milliseconds).
// argv: url connections seconds headersJson body
const [url, connections, seconds, headersJson, body] = process.argv.slice(2);
const headers = JSON.parse(headersJson!) as Record<string, string>;
if (Number(connections) === 1) {
  process.stdout.write(`${JSON.stringify(await sequentialLoad(url!, Number(seconds), headers, body!))}\n`);
} else {
  const result = await autocannon({
    url: url!,
    method: 'POST',
    connections: Number(connections),
    duration: Number(seconds),
    headers,
    body,
  });
  process.stdout.write(
    `${JSON.stringify({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx, total: result.requests.total })}\n`,
  );
}
