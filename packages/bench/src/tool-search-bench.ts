import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { exposedTool, META_TOOLS, visibleSetKey } from '@agentgw/tool-search';
import { ToolIndex, ToolIndexCache } from '@agentgw/tool-search';
import { ALL_TOOLS, CATALOG } from './tool-catalog/catalog.js';
import type { CatalogTool } from './tool-catalog/catalog-schema.js';
import { nearestRank } from './nearest-rank.js';

// The tool-search benchmark (issue 24, "Measured, not asserted"): context size of the full
// tools/list against the search surface, recall of the needed tool in the top 1 and top 5 over
// queries.json (the development set, which ranking was tuned on), queries-heldout.json (written
// before further tuning and never tuned on) and queries-heldout-2.json (written before the
// software-tools vocabulary was built, never looked at against the ranking while building it),
// queries-heldout-3.json and -4.json (each written and committed before a round of issue-24 ranker
// changes, seen from the next round on), queries-heldout-5.json (written and committed before round 3,
// never tuned on: the headline, misses not printed), and search latency. Not a test: it prints numbers. `pnpm --filter @agentgw/bench tool-search`.

interface Query {
  task: string;
  tool: string;
}

const queriesOf = (file: string): Query[] =>
  JSON.parse(readFileSync(new URL(`./tool-catalog/${file}`, import.meta.url), 'utf8')) as Query[];
const QUERIES = queriesOf('queries.json');
const HELD_OUT = queriesOf('queries-heldout.json');
const HELD_OUT_2 = queriesOf('queries-heldout-2.json');
const HELD_OUT_3 = queriesOf('queries-heldout-3.json');
const HELD_OUT_4 = queriesOf('queries-heldout-4.json');
const HELD_OUT_5 = queriesOf('queries-heldout-5.json');
const LATENCY_ROUNDS = Number(process.env.TOOL_SEARCH_ROUNDS ?? 200);
const RESULT_LIMIT = 5;

/** ~tokens as chars/4, the usual rule of thumb for English and JSON. */
const tokens = (chars: number) => Math.round(chars / 4);
const size = (value: unknown) => JSON.stringify(value).length;
const line = (label: string, value: string) => console.log(`${label.padEnd(44)} ${value}`);

/** The search_tools answer a client reads for a query (what the gateway returns: name, description, schema). */
function searchAnswer(index: ToolIndex<CatalogTool>, task: string) {
  const tools = index
    .search(task, RESULT_LIMIT)
    .map(({ tool }) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
  return { content: [{ type: 'text', text: JSON.stringify({ tools }) }], structuredContent: { tools } };
}

function contextSizes(index: ToolIndex<CatalogTool>) {
  const full = size({ tools: ALL_TOOLS });
  const surface = size({ tools: META_TOOLS });
  const answers = QUERIES.map((q) => size(searchAnswer(index, q.task)));
  const meanAnswer = answers.reduce((a, b) => a + b, 0) / answers.length;
  console.log(
    `\nContext (JSON characters, ~tokens = chars/4), ${ALL_TOOLS.length} tools from ${CATALOG.length} providers`,
  );
  line('full tools/list', `${full} chars  ~${tokens(full)} tokens`);
  line('search surface tools/list (2 meta-tools)', `${surface} chars  ~${tokens(surface)} tokens`);
  line(
    `one search_tools answer (limit ${RESULT_LIMIT}), mean`,
    `${Math.round(meanAnswer)} chars  ~${tokens(meanAnswer)} tokens`,
  );
}

function recall(index: ToolIndex<CatalogTool>, label: string, queries: readonly Query[], { showMisses = true } = {}) {
  let top1 = 0;
  let top5 = 0;
  const misses: string[] = [];
  for (const { task, tool } of queries) {
    if (!ALL_TOOLS.some((t) => t.name === tool)) throw new Error(`queries.json names an unknown tool: ${tool}`);
    const names = index.search(task, 5).map((h) => h.name);
    if (names[0] === tool) top1 += 1;
    if (names.includes(tool)) top5 += 1;
    else misses.push(`  "${task}" → wanted ${tool}, got ${names.join(', ') || '(nothing)'}`);
  }
  console.log(`\nRecall, ${label}: ${queries.length} tasks (${ALL_TOOLS.length} tools)`);
  line('recall@1', `${((100 * top1) / queries.length).toFixed(1)}% (${top1}/${queries.length})`);
  line('recall@5', `${((100 * top5) / queries.length).toFixed(1)}% (${top5}/${queries.length})`);
  if (!showMisses) console.log(`not in the top 5: ${misses.length} (not printed: the never-tuned set)`);
  else if (misses.length > 0) console.log(`not in the top 5:\n${misses.join('\n')}`);
}

/**
 * Per-search latency: the engine alone, and as the gateway does it per request: the merged list's
 * fresh copies under exposed names (exposedTool), the visible-set key, the cached index, the search.
 */
function latency(tools: readonly CatalogTool[]) {
  const started = performance.now();
  const index = ToolIndex.build(tools);
  const buildMs = performance.now() - started;
  const cache = new ToolIndexCache<CatalogTool>(16);
  const engine = measure((task) => index.search(task, RESULT_LIMIT));
  const perRequest = measure((task) => {
    // The gateway's merged list: each provider-list object under its exposed name (the same copy every request).
    const visible = tools.map((tool) => exposedTool(tool, tool.name) as CatalogTool);
    return cache.get(visibleSetKey(visible), () => visible).search(task, RESULT_LIMIT);
  });
  console.log(
    `\nLatency at ${tools.length} tools (${engine.wall.length} searches each, ms; wall clock, and CPU time which leaves out waiting for a CPU)`,
  );
  line('index build (once per visible set)', buildMs.toFixed(2));
  for (const [label, { wall, cpu }] of [
    ['search (engine)', engine],
    ['search + visible-set key (per request)', perRequest],
  ] as const) {
    line(
      label,
      `wall p50 ${nearestRank(wall, 50).toFixed(3)}  p99 ${nearestRank(wall, 99).toFixed(3)}   cpu p50 ${nearestRank(cpu, 50).toFixed(3)}  p99 ${nearestRank(cpu, 99).toFixed(3)}`,
    );
  }
}

/**
 * Runs every query LATENCY_ROUNDS times after a warm-up; each sample's wall time and the process's
 * CPU time over it (µs resolution), sorted. On a busy machine the wall time's tail is mostly waiting
 * to be scheduled; the CPU time is what the search itself costs.
 */
function measure(run: (task: string) => unknown): { wall: number[]; cpu: number[] } {
  for (const q of QUERIES) run(q.task);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    for (const q of QUERIES) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      run(q.task);
      wall.push(performance.now() - t0);
      const used = process.cpuUsage(c0);
      cpu.push((used.user + used.system) / 1000);
    }
  }
  return { wall: wall.sort((a, b) => a - b), cpu: cpu.sort((a, b) => a - b) };
}

const index = ToolIndex.build(ALL_TOOLS);
contextSizes(index);
recall(index, 'fifth held-out set (queries-heldout-5.json, headline, never tuned on)', HELD_OUT_5, {
  showMisses: false,
});
recall(index, 'fourth held-out set (queries-heldout-4.json)', HELD_OUT_4);
recall(index, 'third held-out set (queries-heldout-3.json)', HELD_OUT_3);
recall(index, 'second held-out set (queries-heldout-2.json)', HELD_OUT_2);
recall(index, 'first held-out set (queries-heldout.json)', HELD_OUT);
recall(index, 'development set (queries.json)', QUERIES);
latency(ALL_TOOLS.slice(0, 300));
latency(ALL_TOOLS);
