// Node 20 has no fs.globSync (Node 22 does); the conformance CLI imports it for `tier-check` only, which this runner never calls.
export * from 'node:fs';
export { default } from 'node:fs';
export function globSync() {
  throw new Error('fs.globSync is not available on this Node.js version (conformance tier-check needs Node 22)');
}
