import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '@agentgw/testkit';

/**
 * The commit of modelcontextprotocol/conformance whose everything-server is run: "chore: bump
 * version to 0.2.0-alpha.11" (2026-08-07), the newest snapshot available here; the workspace pins
 * the alpha.12 suite, whose release commit the snapshot did not hold.
 */
export const CONFORMANCE_COMMIT = 'c321dd32035556e6769d3724a8ee97d87c3faaac';
/** Where that server lives in its repository. */
const SERVER_PATH = 'examples/servers/typescript/everything-server.ts';
/** Extracted beside this package's node_modules so its imports (SDK 1.x, express, cors, zod) resolve here. */
const EXTRACTED = fileURLToPath(new URL('../.conformance-everything/', import.meta.url));
/** The variable naming a fetched copy of the repository (a git directory or a checkout). */
export const CONFORMANCE_REPO_ENV = 'CONFORMANCE_REPO';

/** A running everything-server: its MCP URL and the process to end. */
export interface RunningServer {
  url: string;
  child: ChildProcess;
}

/**
 * Starts the conformance project's own everything-server (its code is not ours to copy, so it is
 * read from a fetched copy of the repository at CONFORMANCE_COMMIT, `$CONFORMANCE_REPO`) on a free
 * port. Resolves with the reason instead when no copy is given or the commit is not in it.
 */
export async function startConformanceEverything(): Promise<RunningServer | string> {
  const repo = process.env[CONFORMANCE_REPO_ENV];
  if (!repo)
    return `${CONFORMANCE_REPO_ENV} is not set: point it at a copy of github.com/modelcontextprotocol/conformance (commit ${CONFORMANCE_COMMIT}) to run its everything-server`;
  let source: string;
  try {
    const shown = await promisify(execFile)('git', ['-C', repo, 'show', `${CONFORMANCE_COMMIT}:${SERVER_PATH}`], {
      maxBuffer: 16 * 1024 * 1024,
    });
    source = shown.stdout;
  } catch {
    return `${repo} holds no ${SERVER_PATH} at commit ${CONFORMANCE_COMMIT} (fetch the repository at that commit)`;
  }
  await mkdir(EXTRACTED, { recursive: true });
  const file = `${EXTRACTED}everything-server.ts`;
  await writeFile(file, source);
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: EXTRACTED,
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const take = (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-4_000);
      if (seen.includes('Server running on')) resolve();
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('exit', () => reject(new Error(`the conformance everything-server exited: ${seen}`)));
  });
  // Its log lines are not read any further, but the pipes must not fill.
  child.stdout.resume();
  child.stderr.resume();
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}
