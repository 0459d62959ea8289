import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort } from './processes.js';

/** server-everything (a 1.x-SDK server: sessions, sampling and elicitation on the call's stream) in its own streamable HTTP mode on a free port. */
export async function startEverything(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const pkg = dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json'));
  const child = spawn(process.execPath, [join(pkg, 'dist/index.js'), 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('listening')) resolve();
    });
    child.on('exit', () => reject(new Error(`server-everything exited: ${seen}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}
