import { parseArgs } from 'node:util';
import gatewayPackage from '../../package.json' with { type: 'json' };
import type { Env, EnvironmentInput } from '../environment.js';

// Each command's module is imported when it runs, so `--version`, help and a usage error answer
// at once instead of loading the whole gateway first.

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** One command: the words that name it, its synopsis and help, and what it does. */
interface Command {
  words: string[];
  synopsis: string;
  help: string;
  /** How many positional arguments follow the words. */
  operands?: number;
  run(input: EnvironmentInput, values: Values, operands: string[]): Promise<CliOutcome> | CliOutcome;
}

const DATA_OPTIONS = `  --db URL         DATABASE_URL (file:<path>, postgres://...)
  --data-dir DIR   embedded database and development secrets (default .gateway-data)`;

const COMMANDS: Command[] = [
  {
    words: ['init'],
    synopsis: 'init [--force]',
    help: `Writes .env in this directory with JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY and PLATFORM_SECRETS_KEY.
Keys already in the data directory's secrets.json are written, not new ones (new keys would not open that data).
  --force          replace an existing .env (kept beside it as .env.bak-<time>)
  --data-dir DIR   where secrets.json is looked for (default .gateway-data)`,
    run: async (input, values) => (await import('./init.js')).initCommand(input, values.force ?? false),
  },
  {
    words: ['start'],
    synopsis: 'start [--port N] [--host ADDR] [--db URL] [--data-dir DIR]',
    help: `Runs the all-in-one gateway: every service on one port (default 127.0.0.1:7521), the embedded database
unless DATABASE_URL says otherwise. Refuses keys that do not open the stored data.
  --port N         PORT (0: any free port)
  --host ADDR      HOST, the listening address (default 127.0.0.1, loopback only; 0.0.0.0 for every interface)
${DATA_OPTIONS}`,
    run: async (input) => {
      await (await import('./start.js')).startCommand(input);
      return 'running' as const;
    },
  },
  {
    words: ['status'],
    synopsis: 'status [--db URL] [--data-dir DIR]',
    help: `Shows the configuration (secrets hidden), whether it is valid and whether the database answers. Exit 1 when not.
${DATA_OPTIONS}`,
    run: async (input) => (await import('./status.js')).statusCommand(input),
  },
  {
    words: ['admin', 'create'],
    synopsis: 'admin create --email E --password P [--name N]',
    help: `Creates an admin account (the gateway must be stopped on the embedded database, or use the API).
${DATA_OPTIONS}`,
    run: async (input, values) =>
      (await import('./admin.js')).adminCreateCommand(input, {
        email: values.email,
        password: values.password,
        name: values.name,
      }),
  },
  {
    words: ['admin', 'list'],
    synopsis: 'admin list',
    help: `Lists the admin accounts.\n${DATA_OPTIONS}`,
    run: async (input) => (await import('./admin.js')).adminListCommand(input),
  },
  {
    words: ['demo'],
    synopsis: 'demo [--url U] [--email E --password P]',
    help: `Against a running gateway: starts a demo MCP server in the background, registers it as the provider "demo",
gives the agent "demo-agent" access and prints its runtime token and settings for curl, the MCP Inspector and mcp-remote.
  --url U          the gateway (default http://127.0.0.1:<PORT>)
  --email E, --password P
                   an admin account (default ADMIN_EMAIL and ADMIN_PASSWORD)`,
    run: async (input, values) =>
      (await import('./demo.js')).demoCommand(input, {
        url: values.url,
        email: values.email,
        password: values.password,
      }),
  },
  {
    words: ['backup'],
    synopsis: 'backup [--out FILE] [--data-dir DIR]',
    help: `Writes the embedded database (the gateway stopped) into one gzipped archive, owner-only; never over a file.
PostgreSQL: use pg_dump. The keys are not in the archive: keep them with it.
  --out FILE       the archive (default gateway-backup-<time>.tar.gz)
${DATA_OPTIONS}`,
    run: async (input, values) => (await import('./backup.js')).backupCommand(input, values.out),
  },
  {
    words: ['restore'],
    synopsis: 'restore FILE [--data-dir DIR]',
    operands: 1,
    help: `Unpacks an archive of "gateway backup" into the data directory, which must hold no database yet.
${DATA_OPTIONS}`,
    run: async (input, _values, [archive]) => (await import('./backup.js')).restoreCommand(input, archive),
  },
];

const OPTIONS = {
  force: { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  db: { type: 'string' },
  'data-dir': { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  name: { type: 'string' },
  url: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

const USAGE = `Usage: gateway <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.synopsis}`).join('\n')}

gateway <command> --help explains one; gateway --version prints the version.
Configuration is read from the environment, then from .env in the working directory.`;

/** `running` means a server was started and the process must stay up; otherwise an exit code. */
export type CliOutcome = number | 'running';

/** The `gateway` command line: parses, finds the command (or its help, or the version) and runs it. */
export async function runCli(argv: string[], context: { cwd: string; env: Env }): Promise<CliOutcome> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.version || (positionals.length === 1 && positionals[0] === 'version')) {
    console.log(`gateway ${gatewayPackage.version}`);
    return 0;
  }
  const asked = positionals[0] === 'help' ? positionals.slice(1) : positionals;
  const command = COMMANDS.find((c) => c.words.every((w, i) => asked[i] === w));
  if (positionals.length === 0 || ((values.help || positionals[0] === 'help') && !command)) {
    console.log(USAGE);
    return positionals.length === 0 && !values.help ? 2 : 0;
  }
  const operands = asked.slice(command?.words.length ?? 0);
  if (!command || operands.length > (command.operands ?? 0)) {
    console.error(`Unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
    return 2;
  }
  if (values.help || positionals[0] === 'help') {
    console.log(`Usage: gateway ${command.synopsis}\n\n${command.help}`);
    return 0;
  }
  const input = {
    cwd: context.cwd,
    processEnv: context.env,
    port: values.port,
    host: values.host,
    db: values.db,
    dataDir: values['data-dir'],
  };
  try {
    return await command.run(input, values, operands);
  } catch (err) {
    // Operator-facing: one readable message, never a stack trace.
    const { ConfigError } = await import('@agentgw/core');
    console.error(
      err instanceof ConfigError ? err.message : `Error: ${err instanceof Error ? err.message : String(err)}`,
    );
    return 1;
  }
}
