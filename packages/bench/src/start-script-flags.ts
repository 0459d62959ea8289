import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** How the all-in-one's start script runs node: the environment it sets and node's flags. */
export interface StartCommand {
  env: Record<string, string>;
  flags: string[];
}

/**
 * Why: an A/B run starts each build as `pnpm start` does, so the flags come from the one place
 * that sets them, apps/gateway/scripts/start.sh's `exec node …flags dist/cli.js start`.
 */
export function startScriptCommand(repo: string): StartCommand {
  return startCommandOf(readFileSync(join(repo, 'apps', 'gateway', 'scripts', 'start.sh'), 'utf8'));
}

/** The `NAME=value` words before `exec node` and the flags between `node` and `dist/cli.js`; throws when the line has another shape. */
export function startCommandOf(script: string): StartCommand {
  const line = script.split('\n').find((l) => /\bexec node\b/.test(l));
  const match = line === undefined ? null : /^((?:\w+=\S+\s+)*)exec node\s+(.*?)\s*dist\/cli\.js start\b/.exec(line);
  if (match === null)
    throw new Error(
      `start.sh: expected [NAME=value …] exec node …flags dist/cli.js start, found ${line ?? 'no exec node'}`,
    );
  const env = Object.fromEntries(
    match[1]!
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );
  return { env, flags: match[2]!.split(/\s+/).filter(Boolean) };
}
