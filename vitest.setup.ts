import { vi } from 'vitest';

// vitest gives vi.waitFor / vi.waitUntil 1 s unless told otherwise. A wait in these tests is for
// something that will happen (a hold written, a queue hop, a process up), and on CI's two cores
// shared by four suites that can take many seconds; a wait that times out fails a correct test.
// The default becomes WAIT_MS; a test that names its own timeout keeps it. The test's own
// timeout (vitest.shared.ts) still bounds a hang.
const WAIT_MS = 30_000;

const { waitFor, waitUntil } = vi;
vi.waitFor = (callback, options) =>
  waitFor(callback, typeof options === 'number' ? options : { timeout: WAIT_MS, ...options });
vi.waitUntil = (callback, options) =>
  waitUntil(callback, typeof options === 'number' ? options : { timeout: WAIT_MS, ...options });
