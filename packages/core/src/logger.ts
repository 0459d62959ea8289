import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import type PinoPretty from 'pino-pretty';

export type Logger = PinoLogger;

/** How lines are written: one JSON object per line, or readable text (`pino-pretty`). */
export type LogFormat = 'json' | 'pretty';

/** Field names whose values never reach a log line. */
const REDACT = [
  'password',
  'passwordHash',
  'token',
  'apiKey',
  'key',
  'secret',
  'authSecret',
  'upstreamSecret',
  'clientSecret',
  'runtime_token',
  'authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.password',
  '*.token',
  '*.apiKey',
  '*.secret',
  '*.authSecret',
  '*.upstreamSecret',
  '*.clientSecret',
];

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** `LOG_FORMAT`; unset, chosen by `resolveLogFormat`. */
  format?: LogFormat;
  /** Where lines go instead of stdout (tests read them back); always JSON. */
  destination?: DestinationStream;
}

/**
 * Text only when asked for, or when a person is watching: stdout is a terminal and this is not
 * production or a test run. Containers, CI, tests and the bench pipe stdout, so they get JSON.
 */
export function resolveLogFormat(
  format: LogFormat | undefined,
  where: { isTTY: boolean; nodeEnv: string | undefined } = {
    isTTY: process.stdout.isTTY === true,
    nodeEnv: process.env.NODE_ENV,
  },
): LogFormat {
  if (format) return format;
  return where.isTTY && where.nodeEnv !== 'production' && where.nodeEnv !== 'test' ? 'pretty' : 'json';
}

/** The process's pino logger: secrets redacted by field name; JSON lines, or text on a terminal. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = {
    name: options.name,
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT, censor: '[redacted]' },
  };
  if (options.destination) return pino(settings, options.destination);
  return resolveLogFormat(options.format) === 'pretty' ? pino(settings, prettyStream()) : pino(settings);
}

/** An access-log line reads as `POST /api/v1/agents 201 12.3ms`, its other fields after it. */
export function summarizeAccessLine(log: Record<string, unknown>): Record<string, unknown> {
  if (log.msg !== 'request' || !('status' in log)) return log;
  const { method, path, status, durationMs, ...rest } = log;
  return { ...rest, msg: `${String(method)} ${String(path)} ${String(status)} ${String(durationMs)}ms` };
}

/**
 * pino-pretty's formatter in this thread (no transport worker), one line per entry, written
 * synchronously so the last lines before a shutdown's exit are kept. Loaded only when chosen:
 * a JSON process never loads it.
 */
function prettyStream(): DestinationStream {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  const format = prettyFactory({ singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  const out = pino.destination({ dest: 1, sync: true });
  return {
    write: (line: string) => void out.write(format(summarizeAccessLine(JSON.parse(line) as Record<string, unknown>))),
  };
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
