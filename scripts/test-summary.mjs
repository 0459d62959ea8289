// Adds up the vitest JSON reports that every package wrote to VITEST_REPORT_DIR (see
// vitest.shared.ts) into one closing line for CI: "Tests: N passed, N failed, N skipped".
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? process.env.VITEST_REPORT_DIR;
if (!dir) {
  console.error('usage: node scripts/test-summary.mjs <report-dir>');
  process.exit(2);
}
let passed = 0;
let failed = 0;
let skipped = 0;
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
for (const file of files) {
  const report = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + report.numTodoTests;
}
console.log(`${files.length} packages reported`);
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
