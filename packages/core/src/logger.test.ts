import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveLogFormat, summarizeAccessLine } from './logger.js';

const CORE = fileURLToPath(new URL('..', import.meta.url));

/** Runs createLogger in a child whose stdout is a pipe (as in containers, CI and the bench) and returns what it wrote. */
function logFrom(env: Record<string, string>): string {
  const script = `import { createLogger } from './src/logger.ts';
    const log = createLogger({ name: 'svc', format: process.env.LOG_FORMAT || undefined });
    log.info({ method: 'POST', path: '/api/v1/things', status: 201, durationMs: 4.2, route: '/api/v1/things' }, 'request');
    log.warn({ token: 'secret-token-value' }, 'careful');`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: CORE,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  expect(child.stderr).toBe('');
  return child.stdout;
}

describe('log format', () => {
  it('is text only on a terminal outside production and tests, unless LOG_FORMAT says', () => {
    expect(resolveLogFormat(undefined, { isTTY: true, nodeEnv: 'development' })).toBe('pretty');
    expect(resolveLogFormat(undefined, { isTTY: true, nodeEnv: undefined })).toBe('pretty');
    expect(resolveLogFormat(undefined, { isTTY: false, nodeEnv: 'development' })).toBe('json');
    expect(resolveLogFormat(undefined, { isTTY: true, nodeEnv: 'production' })).toBe('json');
    expect(resolveLogFormat(undefined, { isTTY: true, nodeEnv: 'test' })).toBe('json');
    expect(resolveLogFormat('json', { isTTY: true, nodeEnv: 'development' })).toBe('json');
    expect(resolveLogFormat('pretty', { isTTY: false, nodeEnv: 'production' })).toBe('pretty');
  });

  it('writes JSON lines when stdout is a pipe', () => {
    const lines = logFrom({})
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toMatchObject([
      { level: 30, name: 'svc', msg: 'request', method: 'POST', status: 201 },
      { level: 40, msg: 'careful', token: '[redacted]' },
    ]);
  });

  it('writes readable text with LOG_FORMAT=pretty, access lines summed up, secrets still redacted', () => {
    const text = logFrom({ LOG_FORMAT: 'pretty', NO_COLOR: '1' });
    const [access, warning] = text.trim().split('\n');
    expect(access).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(svc\): POST \/api\/v1\/things 201 4\.2ms \{"route":"\/api\/v1\/things"\}$/,
    );
    expect(warning).toMatch(/WARN \(svc\): careful \{"token":"\[redacted\]"\}/);
    expect(text).not.toContain('secret-token-value');
  });

  it('leaves other lines as they are', () => {
    const line = { msg: 'listening', port: 1 };
    expect(summarizeAccessLine(line)).toBe(line);
  });
});
