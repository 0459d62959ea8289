#!/bin/sh
# The all-in-one's start, written once: the root's `pnpm start` and this package's `start` (the
# bench's path) both run it. The bundle is rebuilt when older than its sources; node's flags are
# the ones README.md's memory and CPU tables measured. `exec` keeps one process under pnpm.
set -e
cd "$(dirname "$0")/.."
node ../../scripts/bundle.mjs --if-stale --link-externals src/cli.ts
MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 exec node --liftoff-only --max-semi-space-size=4 --no-parallel-scavenge --heap-growing-percent=50 dist/cli.js start "$@"
