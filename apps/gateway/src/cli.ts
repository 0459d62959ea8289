import { runCli } from './cli/run.js';

// `pnpm start` / `pnpm gateway` run this inside apps/gateway; INIT_CWD is where the user typed
// the command, so `.env` and `.gateway-data` live there.
const cwd = process.env.INIT_CWD ?? process.cwd();
const outcome = await runCli(process.argv.slice(2), { cwd, env: process.env });
if (outcome !== 'running') process.exit(outcome);
