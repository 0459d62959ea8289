// Times matchGlob on the pattern that froze the old regular-expression matcher for 5 s.
import { matchGlob, MAX_TOOL_NAME_LENGTH } from '../src/glob.js';

const cases: [label: string, pattern: string, name: string][] = [
  ['issue pattern *a*a*a*a*a*a*a*a*b vs 40 a', '*a*a*a*a*a*a*a*a*b', 'a'.repeat(40)],
  ['40 × *a then *b vs 256 a (longest name)', '*a'.repeat(40) + '*b', 'a'.repeat(MAX_TOOL_NAME_LENGTH)],
  ['github_* vs github_create_issue', 'github_*', 'github_create_issue'],
];

for (const [label, pattern, name] of cases) {
  const rounds = 2_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) matchGlob(pattern, name);
  const perMatchUs = Number(process.hrtime.bigint() - started) / rounds / 1_000;
  console.log(`${label}: ${perMatchUs.toFixed(2)} µs per match`);
}
