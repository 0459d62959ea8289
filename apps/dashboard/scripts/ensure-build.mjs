// `pnpm start` runs this first (the root `prestart`): builds the console when dist/ is missing or
// older than its sources, so the all-in-one serves an up-to-date console at /. A failed build
// never stops the gateway from starting; it then serves the API only and says so.
import { buildConsole, consoleIsStale } from './console-build.mjs';

if (consoleIsStale()) {
  console.log('Building the web console (apps/dashboard)…');
  try {
    await buildConsole();
  } catch (err) {
    console.warn(
      `The web console could not be built (${err instanceof Error ? err.message : String(err)}); the gateway will serve the API only.`,
    );
  }
}
