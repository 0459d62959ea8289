import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The two pinned suite versions (npm aliases in package.json) and how each column runs them. */
export type SuiteColumn = {
  label: '0.1.16' | 'alpha 2026-07-28' | 'alpha 2025-11-25';
  pkg: 'conformance-stable' | 'conformance-alpha';
  args: string[];
};

/** Every column set: 0.1.16 with all its server scenarios, the alpha per required revision. */
export const COLUMNS: SuiteColumn[] = [
  { label: '0.1.16', pkg: 'conformance-stable', args: ['--suite', 'all'] },
  { label: 'alpha 2026-07-28', pkg: 'conformance-alpha', args: ['--requirements', '2026-07-28'] },
  { label: 'alpha 2025-11-25', pkg: 'conformance-alpha', args: ['--requirements', '2025-11-25'] },
];

/** One scenario's verdict. Warnings pass; a skipped check, a failure or no check at all fails. */
export interface ScenarioVerdict {
  pass: boolean;
  checks: number;
  failures: string[];
}

/** The verdict of a scenario that was never run. */
export const NOT_RUN: ScenarioVerdict = { pass: false, checks: 0, failures: ['not run'] };

const require = createRequire(import.meta.url);
const HOOKS = new URL('./fs-glob-register.mjs', import.meta.url).pathname;
const cliOf = (pkg: SuiteColumn['pkg']) => join(dirname(require.resolve(`${pkg}/package.json`)), 'dist/index.js');

function run(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', HOOKS, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-200_000)));
    child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-200_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}

/** The scored server scenarios of a column, as the CLI's own `list` names them. */
export async function scenariosOf(column: SuiteColumn): Promise<string[]> {
  const listArgs = column.args[0] === '--requirements' ? ['--requirements', column.args[1]!] : [];
  const output = await run([cliOf(column.pkg), 'list', '--server', ...listArgs], 60_000);
  const server = output.split('Server scenarios')[1]?.split(/\n\s*\n/)[0] ?? '';
  return [...server.matchAll(/^\s+- ([a-z0-9][a-z0-9-]*)/gm)].map((match) => match[1]!);
}

/**
 * A column's arguments for one scenario: the CLI refuses `--requirements` beside `--scenario`
 * (a requirement set fixes the scenarios), so the revision is given as `--spec-version`, and a
 * suite name is dropped (the scenario is named).
 */
function singleScenarioArgs(column: SuiteColumn): string[] {
  const [flag, value] = column.args;
  if (flag === '--requirements' && value !== undefined) return ['--spec-version', value];
  return column.args.filter((a) => a !== '--suite' && a !== 'all');
}

/** Runs one column's server scenarios against `url` (all of them, or `only`) and reads each scenario's checks.json. */
export async function runColumn(
  column: SuiteColumn,
  url: string,
  scenarios: string[],
  only?: string,
): Promise<Map<string, ScenarioVerdict>> {
  const out = await mkdtemp(join(tmpdir(), 'agentgw-conformance-'));
  try {
    const args = [
      cliOf(column.pkg),
      'server',
      '--url',
      url,
      '-o',
      out,
      ...(only ? ['--scenario', only, ...singleScenarioArgs(column)] : column.args),
    ];
    await run(args, 600_000);
    const verdicts = new Map<string, ScenarioVerdict>();
    const dirs = await readdir(out);
    for (const scenario of only ? [only] : scenarios) {
      const dir = dirs.find((name) => name.startsWith(`server-${scenario}-2`));
      verdicts.set(
        scenario,
        dir
          ? verdictOf(JSON.parse(await readFile(join(out, dir, 'checks.json'), 'utf8')))
          : { pass: false, checks: 0, failures: ['no result (scenario did not run)'] },
      );
    }
    return verdicts;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

function verdictOf(checks: { id: string; status: string; errorMessage?: string }[]): ScenarioVerdict {
  const scored = checks.filter((check) => check.status !== 'INFO');
  const failures = scored
    .filter((check) => check.status === 'FAILURE' || check.status === 'SKIPPED')
    .map((check) => `${check.id} ${check.status}${check.errorMessage ? `: ${check.errorMessage.slice(0, 160)}` : ''}`);
  return {
    pass: scored.length > 0 && failures.length === 0,
    checks: scored.length,
    failures: scored.length === 0 ? ['zero checks'] : failures,
  };
}
