import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Why: the distributed run starts each service as its image does, so node's flags come from the
 * one place that sets them, infra/Dockerfile's `CMD ["node", …flags, "dist/main.js"]`.
 */
export function imageNodeFlags(repo: string): string[] {
  return nodeFlagsOfCmd(readFileSync(join(repo, 'infra', 'Dockerfile'), 'utf8'));
}

/** The flags between `node` and `dist/main.js` of a Dockerfile's last exec-form CMD; throws when it has another shape. */
export function nodeFlagsOfCmd(dockerfile: string): string[] {
  const line = dockerfile
    .split('\n')
    .filter((l) => /^CMD\s+\[/.test(l))
    .at(-1);
  const command: unknown = line === undefined ? null : JSON.parse(line.replace(/^CMD\s+/, ''));
  if (
    !Array.isArray(command) ||
    command[0] !== 'node' ||
    command.at(-1) !== 'dist/main.js' ||
    !command.every((part) => typeof part === 'string')
  )
    throw new Error(`infra/Dockerfile: expected CMD ["node", …flags, "dist/main.js"], found ${line ?? 'no CMD'}`);
  return command.slice(1, -1);
}
