import { ConfigError } from '@agentgw/core';
import { parseArgs } from 'node:util';
import type { Env } from '../environment.js';
import { adminCreateCommand, adminListCommand } from './admin.js';
import { demoCommand } from './demo.js';
import { initCommand } from './init.js';
import { startCommand } from './start.js';
import { statusCommand } from './status.js';

const USAGE = `Usage: gateway <command> [options]

Commands:
  init [--force]                          write .env with generated secrets in this directory
  start [--port N] [--db URL]             run the all-in-one gateway (default port 7521, embedded database)
  status                                  show the configuration (secrets hidden) and check the database
  admin create --email E --password P [--name N]
                                          create an admin account
  admin list                              list admin accounts
  demo [--url U] [--email E --password P] against a running gateway: a demo MCP server, provider, agent and
                                          rule, then ready settings for curl, the MCP Inspector and mcp-remote

Options for start, status and admin:
  --db URL         DATABASE_URL (file:<path>, postgres://...)
  --data-dir DIR   embedded database and development secrets (default .gateway-data)

Configuration is read from the environment, then from .env in the working directory.`;

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
  help: { type: 'boolean', short: 'h' },
} as const;

/** `running` means a server was started and the process must stay up; otherwise an exit code. */
export type CliOutcome = number | 'running';

export async function runCli(argv: string[], context: { cwd: string; env: Env }): Promise<CliOutcome> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, sub, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    console.log(USAGE);
    return values.help || command === 'help' ? 0 : 2;
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
    if (command === 'init' && sub === undefined) return initCommand(context.cwd, values.force ?? false);
    if (command === 'start' && sub === undefined) {
      await startCommand(input);
      return 'running';
    }
    if (command === 'status' && sub === undefined) return await statusCommand(input);
    if (command === 'admin' && sub === 'create' && rest.length === 0) {
      return await adminCreateCommand(input, { email: values.email, password: values.password, name: values.name });
    }
    if (command === 'admin' && sub === 'list' && rest.length === 0) return await adminListCommand(input);
    if (command === 'demo' && sub === undefined) {
      return await demoCommand(input, { url: values.url, email: values.email, password: values.password });
    }
  } catch (err) {
    // Operator-facing: one readable message, never a stack trace.
    console.error(
      err instanceof ConfigError ? err.message : `Error: ${err instanceof Error ? err.message : String(err)}`,
    );
    return 1;
  }
  console.error(`Unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
  return 2;
}
