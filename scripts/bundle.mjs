// Bundles one app entry into dist/ for production images: our workspace packages are inlined,
// third-party packages stay external (installed in the image with `pnpm deploy`).
import { build } from 'esbuild';
import { basename } from 'node:path';

const entries = process.argv.slice(2);
if (entries.length === 0) {
  console.error('usage: node scripts/bundle.mjs <entry.ts> [<entry.ts> ...]');
  process.exit(2);
}
await build({
  entryPoints: Object.fromEntries(entries.map((e) => [basename(e).replace(/\.ts$/, ''), e])),
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: true,
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  plugins: [
    {
      name: 'external-third-party',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith('@agentgw/') ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});
