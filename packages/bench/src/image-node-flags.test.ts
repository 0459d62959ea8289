import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { imageNodeFlags, nodeFlagsOfCmd } from './image-node-flags.js';

describe('imageNodeFlags', () => {
  it("reads node's flags from the image's CMD, the last one winning", () => {
    const dockerfile = [
      'FROM node:24 AS build',
      'CMD ["node", "old.js"]',
      'HEALTHCHECK CMD node -e "1"',
      'CMD ["node", "--a", "--b=2", "dist/main.js"]',
    ].join('\n');
    expect(nodeFlagsOfCmd(dockerfile)).toEqual(['--a', '--b=2']);
  });

  it('refuses a CMD of another shape rather than run the services differently', () => {
    expect(() => nodeFlagsOfCmd('CMD node dist/main.js')).toThrow(/expected CMD \["node"/);
    expect(() => nodeFlagsOfCmd('CMD ["node", "dist/cli.js"]')).toThrow(/found CMD \["node", "dist\/cli.js"\]/);
    expect(() => nodeFlagsOfCmd('FROM scratch')).toThrow(/found no CMD/);
  });

  it("gives the repository's own image flags", () => {
    const flags = imageNodeFlags(fileURLToPath(new URL('../../../', import.meta.url)));
    expect(flags).toContain('--heap-growing-percent=50');
    expect(flags.every((flag) => flag.startsWith('--'))).toBe(true);
  });
});
