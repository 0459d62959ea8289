import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError, configSchema } from '@agentgw/core';
import { DEFAULT_DATA_DIR } from '@agentgw/db';

export type Env = Record<string, string | undefined>;

export const DEFAULT_PORT = 7521;

export interface GatewayEnvironment {
  env: Env;
  /** Absolute data directory: embedded database and development secrets. */
  dataDir: string;
  /** The `.env` that was read, if any. */
  envFile: string | null;
}

export interface EnvironmentInput {
  cwd: string;
  processEnv: Env;
  /** Command-line overrides (`--port`, `--host`, `--db`, `--data-dir`). */
  port?: string;
  host?: string;
  db?: string;
  dataDir?: string;
}

/**
 * The variables the gateway runs with: command-line flags over the process environment over
 * `.env` in the working directory (the same precedence as dotenv: the environment wins).
 */
export function readEnvironment(input: EnvironmentInput): GatewayEnvironment {
  const envPath = resolve(input.cwd, '.env');
  const fromFile = existsSync(envPath) ? parseEnv(readFileSync(envPath, 'utf8')) : {};
  const env: Env = { ...fromFile, ...input.processEnv };
  if (input.port !== undefined) env.PORT = input.port;
  if (input.host !== undefined) env.HOST = input.host;
  if (input.db !== undefined) env.DATABASE_URL = input.db;
  return {
    env,
    dataDir: resolve(input.cwd, input.dataDir ?? DEFAULT_DATA_DIR),
    envFile: existsSync(envPath) ? envPath : null,
  };
}

/** DATABASE_URL alone, validated as loadConfig would, for commands that need nothing else; undefined means embedded. */
export function databaseUrlOf(env: Env): string | undefined {
  const parsed = configSchema.shape.DATABASE_URL.safeParse(env.DATABASE_URL);
  if (!parsed.success) {
    throw new ConfigError([{ variable: 'DATABASE_URL', message: parsed.error.issues[0]?.message ?? 'is invalid' }]);
  }
  return parsed.data;
}

/** Where openDatabase keeps the embedded database when DATABASE_URL is unset. */
export const embeddedDatabasePath = (dataDir: string): string => resolve(dataDir, 'pgdata');
