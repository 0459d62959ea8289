// Module hooks: the conformance CLI's `fs` import resolves to fs-glob-shim.mjs when Node lacks fs.globSync.
import fs from 'node:fs';

const SHIM = new globalThis.URL('./fs-glob-shim.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (
    !('globSync' in fs) &&
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL?.includes('/@modelcontextprotocol/conformance/')
  )
    return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
