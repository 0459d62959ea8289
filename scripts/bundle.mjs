// Bundles app entries into dist/: our workspace packages are inlined, third-party packages stay
// external. Production images install those with `pnpm deploy` (infra/build-service.sh);
// `--link-externals` instead links into dist/node_modules every third-party dependency the
// bundled workspace packages declare, from where each package resolves it, so `node dist/<entry>.js`
// runs in place (the gateway's `pnpm start`), modules loaded at run time by name included.
// `--if-stale` skips the build when the bundle is newer than every file it was built from.
import { build } from 'esbuild';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const OUT = 'dist';
const LINKS = join(OUT, 'node_modules');
// What the last build read and linked, for --if-stale.
const MANIFEST = join(OUT, 'bundle-manifest.json');

const args = process.argv.slice(2);
const flags = new Set(args.filter((a) => a.startsWith('--')));
const entries = args.filter((a) => !a.startsWith('--'));
const unknown = [...flags].filter((f) => f !== '--if-stale' && f !== '--link-externals');
if (entries.length === 0 || unknown.length > 0) {
  console.error('usage: node scripts/bundle.mjs [--if-stale] [--link-externals] <entry.ts> [<entry.ts> ...]');
  process.exit(2);
}
const outName = (entry) => join(OUT, basename(entry).replace(/\.ts$/, '.js'));
const link = flags.has('--link-externals');

if (!(flags.has('--if-stale') && isFresh())) await bundle();

/** The bundles exist, are newer than this script and every input, and were linked as now asked. */
function isFresh() {
  if (!existsSync(MANIFEST)) return false;
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  if (manifest.link !== link || manifest.entries.join('\0') !== entries.join('\0')) return false;
  const outputs = entries.map(outName);
  if (!outputs.every(existsSync)) return false;
  const built = Math.min(...outputs.map((o) => statSync(o).mtimeMs));
  const sources = [fileURLToPath(import.meta.url), ...manifest.inputs];
  // A missing source or link target (a file removed, a dependency reinstalled) means stale.
  return (
    sources.every((s) => existsSync(s) && statSync(s).mtimeMs <= built) &&
    Object.values(manifest.links).every((t) => existsSync(t))
  );
}

async function bundle() {
  const result = await build({
    entryPoints: Object.fromEntries(entries.map((e) => [basename(e).replace(/\.ts$/, ''), e])),
    outdir: OUT,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    sourcemap: true,
    metafile: true,
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
  const sources = Object.keys(result.metafile.inputs).map((i) => resolve(i));
  const packages = [...new Set(sources.map(packageDirOf))];
  const links = link ? dependencyLinks(packages) : new Map();
  // Images must never carry links into this machine's store, so a plain build removes them.
  rmSync(LINKS, { recursive: true, force: true });
  for (const [name, target] of links) {
    mkdirSync(dirname(join(LINKS, name)), { recursive: true });
    symlinkSync(target, join(LINKS, name), 'dir');
  }
  // The packages' manifests count as inputs: a dependency added there changes the links.
  const inputs = [...sources, ...packages.map((p) => join(p, 'package.json'))];
  writeFileSync(MANIFEST, JSON.stringify({ entries, link, inputs, links: Object.fromEntries(links) }));
}

/** Package name → folder, for every third-party dependency of these workspace packages. */
function dependencyLinks(packages) {
  const links = new Map();
  for (const pkg of packages) {
    const { dependencies = {} } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
    for (const name of Object.keys(dependencies).filter((n) => !n.startsWith('@agentgw/'))) {
      const target = realpathSync(join(pkg, 'node_modules', name));
      const seen = links.get(name);
      // One link per name: two versions of a package cannot both be found from dist/.
      if (seen !== undefined && seen !== target)
        throw new Error(`two copies of ${name} (${seen}, ${target}): the bundle cannot link both`);
      links.set(name, target);
    }
  }
  return links;
}

/** The nearest folder holding a package.json: the workspace package a source file belongs to. */
function packageDirOf(file) {
  let dir = dirname(file);
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}
