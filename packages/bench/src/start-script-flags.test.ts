import { describe, expect, it } from 'vitest';
import { startCommandOf, startScriptCommand } from './start-script-flags.js';

describe('startCommandOf', () => {
  it('reads the environment and the flags of the exec line', () => {
    const script =
      '#!/bin/sh\nset -e\nA_B=2 C_=131072 exec node --liftoff-only --max-semi-space-size=4 dist/cli.js start "$@"\n';
    expect(startCommandOf(script)).toEqual({
      env: { A_B: '2', C_: '131072' },
      flags: ['--liftoff-only', '--max-semi-space-size=4'],
    });
  });

  it('takes a line without environment or flags', () => {
    expect(startCommandOf('exec node dist/cli.js start "$@"')).toEqual({ env: {}, flags: [] });
  });

  it('refuses a script of another shape', () => {
    expect(() => startCommandOf('node dist/cli.js start')).toThrow(/no exec node/);
    expect(() => startCommandOf('exec node --x dist/main.js')).toThrow(/expected/);
  });

  it("reads the repository's own start script", () => {
    const { flags } = startScriptCommand(new URL('../../..', import.meta.url).pathname);
    expect(flags).toContain('--max-semi-space-size=4');
  });
});
