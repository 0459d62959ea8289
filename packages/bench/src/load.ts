import autocannon from 'autocannon';

// The load generator, in its own process: one autocannon run against one URL, the result as one JSON line.
// argv: url connections seconds headersJson body
const [url, connections, seconds, headersJson, body] = process.argv.slice(2);
const result = await autocannon({
  url: url!,
  method: 'POST',
  connections: Number(connections),
  duration: Number(seconds),
  headers: JSON.parse(headersJson!) as Record<string, string>,
  body,
});
process.stdout.write(
  `${JSON.stringify({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx, total: result.requests.total })}\n`,
);
