// Adds up the vitest JSON reports that every package wrote to VITEST_REPORT_DIR (see
// vitest.shared.ts) into one closing line for CI: "Tests: N passed, N failed, N skipped", and a
// second line for the Node 24 suites' reports in its node24/ folder (scripts/run-tests.mjs), when any.
// The slowest test files follow, so a CI log says where its time goes, and last every failed test
// by file and name with its first error line, so the log's tail names what failed; after them
// the last lines of every failed job (scripts/run-tests.mjs wrote them to failed-jobs.txt), which
// say why a job that is not a vitest suite (the conformance ratchet, a lint) failed.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const dir = process.argv[2] ?? process.env.VITEST_REPORT_DIR;
if (!dir) {
  console.error('usage: node scripts/test-summary.mjs <report-dir>');
  process.exit(2);
}
const SLOWEST = 12;

/** The reports in `folder`: their totals and every test file's wall time. */
function tally(folder) {
  const totals = { reports: 0, passed: 0, failed: 0, skipped: 0 };
  const files = [];
  const failures = [];
  for (const name of readdirSync(folder).filter((f) => f.endsWith('.json'))) {
    const report = JSON.parse(readFileSync(join(folder, name), 'utf8'));
    totals.reports += 1;
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests;
    totals.skipped += report.numPendingTests + report.numTodoTests;
    for (const file of report.testResults ?? []) {
      files.push({ path: file.name, ms: file.endTime - file.startTime });
      const failed = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
      for (const test of failed)
        failures.push({ path: file.name, name: test.fullName, message: firstLine(test.failureMessages) });
      // A file that failed outside any test (an import or a hook) names itself.
      if (failed.length === 0 && file.status === 'failed')
        failures.push({ path: file.name, name: '(the file)', message: firstLine([file.message]) });
    }
  }
  return { totals, files, failures };
}

/** The first line of a test's first failure message, cut to one screen line. */
function firstLine(messages) {
  const text = String(messages?.[0] ?? '').split('\n')[0] ?? '';
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

const line = ({ passed, failed, skipped }) => `${passed} passed, ${failed} failed, ${skipped} skipped`;
const main = tally(dir);
console.log(`${main.totals.reports} packages reported`);
console.log(`Tests: ${line(main.totals)}`);
const node24Dir = join(dir, 'node24');
const node24 = existsSync(node24Dir) ? tally(node24Dir) : null;
if (node24 && node24.totals.reports > 0)
  console.log(`Node 24: ${node24.totals.reports} suites, ${line(node24.totals)}`);

const root = process.cwd();
const slowest = main.files.sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
if (slowest.length > 0) console.log(`Slowest test files (machine's Node):`);
for (const { path, ms } of slowest)
  console.log(`  ${String(Math.round(ms / 1000)).padStart(5)} s  ${relative(root, path)}`);
const failures = [...main.failures, ...(node24?.failures ?? []).map((f) => ({ ...f, name: `[Node 24] ${f.name}` }))];
if (failures.length > 0) console.log('Failed tests:');
for (const { path, name, message } of failures) console.log(`  ${relative(root, path)} > ${name}\n      ${message}`);
const failedJobs = join(dir, 'failed-jobs.txt');
if (existsSync(failedJobs)) process.stdout.write(`Failed jobs:\n${readFileSync(failedJobs, 'utf8')}`);
process.exit(main.totals.failed + (node24?.totals.failed ?? 0) > 0 ? 1 : 0);
