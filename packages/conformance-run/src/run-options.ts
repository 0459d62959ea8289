/** The command line of a conformance run, checked before anything starts (a typo must not cost a full run). */
const USAGE = `usage: node --import tsx src/main.ts [--ratchet | --update-baseline] [--topology all-in-one|distributed|cluster] [--concurrency N] [--upstream fixture|conformance-everything]
  --ratchet             exit 1 when a baseline cell fails (after up to 3 retries of that scenario)
  --update-baseline     two runs; cells passing in both become conformance-baseline.json
  --topology NAME       one topology only (the baseline keeps the other's cells); cluster (Redis Cluster +
                        PgBouncer) runs only when named
  --concurrency N       suite runs at once (default 3)
  --upstream NAME       the suite's upstream: our fixture (default; the ratchet's) or the conformance
                        project's own everything-server, read from $CONFORMANCE_REPO (table only)`;

/** Which upstream the suite scenarios run against. */
export type SuiteUpstream = 'fixture' | 'conformance-everything';

/** Where a run starts the gateway; `cluster` only when named. */
export type Topology = 'all-in-one' | 'distributed' | 'cluster';

/** What a run was asked to do. */
export interface RunOptions {
  ratchet: boolean;
  updateBaseline: boolean;
  concurrency: number;
  topologies: Topology[];
  upstream: SuiteUpstream;
}

/** The options of `argv`, or the exit (usage on stderr: 0 for --help, 2 for a mistake). */
export function runOptions(argv: string[]): RunOptions {
  const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
  const mistake = usageError(argv, option);
  if (argv.includes('--help') || mistake) {
    process.stderr.write(`${argv.includes('--help') ? '' : `${mistake}\n`}${USAGE}\n`);
    process.exit(argv.includes('--help') ? 0 : 2);
  }
  const topology = option('--topology');
  return {
    ratchet: argv.includes('--ratchet'),
    updateBaseline: argv.includes('--update-baseline'),
    concurrency: Number(option('--concurrency') ?? 3),
    topologies: topology ? [topology as Topology] : ['all-in-one', 'distributed'],
    upstream: (option('--upstream') ?? 'fixture') as SuiteUpstream,
  };
}

function usageError(argv: string[], option: (name: string) => string | undefined): string | null {
  const known = new Set(['--ratchet', '--update-baseline', '--topology', '--concurrency', '--upstream', '--help']);
  const valued = ['--topology', '--concurrency', '--upstream'];
  const values = new Set(valued.map(option).filter((value) => value !== undefined));
  const unknown = argv.find((arg) => !known.has(arg) && !values.has(arg));
  if (unknown) return `unknown argument ${unknown}`;
  if (argv.includes('--topology') && !['all-in-one', 'distributed', 'cluster'].includes(option('--topology') ?? ''))
    return '--topology takes all-in-one, distributed or cluster';
  if (argv.includes('--concurrency') && !(Number(option('--concurrency')) >= 1))
    return '--concurrency takes a positive number';
  const upstream = option('--upstream');
  if (argv.includes('--upstream') && !['fixture', 'conformance-everything'].includes(upstream ?? ''))
    return '--upstream takes fixture or conformance-everything';
  if (upstream === 'conformance-everything' && (argv.includes('--ratchet') || argv.includes('--update-baseline')))
    return "the baseline is the fixture upstream's: --upstream conformance-everything prints the table only";
  return null;
}
