// `pnpm --filter @agentgw/dashboard build`: the console built beside dist/ and swapped in
// (console-build.mjs), never by emptying dist/ in place. Tests build it while other tests' gateways
// serve it; a plain `vite build` left them without index.html for seconds (500 ENOENT in CI).
import { buildConsole } from './console-build.mjs';

await buildConsole();
