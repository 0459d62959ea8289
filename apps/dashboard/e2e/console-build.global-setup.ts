import { buildConsole } from '../scripts/console-build.mjs';
import { chromiumAvailable } from './harness.js';

/**
 * vitest global setup of the console e2e: builds the console from its current sources once per
 * run, before any file starts its gateway (each file built it again in its own beforeAll: one
 * vite build per file, the same output every time). Without Chromium the files skip, and nothing is built.
 */
export default async function setup(): Promise<void> {
  if (chromiumAvailable) await buildConsole();
}
