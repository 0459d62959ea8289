// Preloaded into the gateway's node processes by the benchmark (NODE_OPTIONS=--import <this file>,
// with BENCH_PROBE_DIR set): measures event-loop delay with perf_hooks.monitorEventLoopDelay and,
// on SIGUSR2, writes `{ pid, argv, rss, memory, workerThreads, delay, gc }` to
// BENCH_PROBE_DIR/probe-<pid>.json and starts a new measurement window: `delay` is beyond its 1 ms
// sampling interval, `gc` the main thread's collections in the window by kind (count, total and
// longest pause in ms, from perf_hooks' gc entries), `memory` the main thread's process.memoryUsage(), `workerThreads` the OS
// thread ids of the worker threads the process started (the all-in-one's embedded database runs in
// one), for the bench's per-thread CPU split. With BENCH_PROFILE_DIR also set, the first SIGUSR2
// (sent after the warm-up) starts V8's CPU profiler and exit writes
// BENCH_PROFILE_DIR/gateway-<pid>.cpuprofile (node refuses --cpu-prof in NODE_OPTIONS); with
// BENCH_PROFILE_HEAP=1 instead, V8's sampling heap profiler, counting what the collector freed too
// (what was allocated, not what is left), into gateway-<pid>.heapprofile; BENCH_PROFILE_HEAP=promoted
// counts only what outlived the young generation (freed by a full collection, or still live): what
// grows the old generation under load. A CPU profile also covers the worker threads (the embedded
// database's): each later SIGUSR2 ends their profiles into BENCH_PROFILE_DIR/worker-<pid>-<worker
// id>-<n>.cpuprofile and starts new ones (a worker ends before exit, so they cannot wait for it).
// Without BENCH_PROBE_DIR it does nothing.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const dir = process.env.BENCH_PROBE_DIR;
const profileDir = process.env.BENCH_PROFILE_DIR;
const heapProfile = process.env.BENCH_PROFILE_HEAP === '1' || process.env.BENCH_PROFILE_HEAP === 'promoted';
const youngGarbageSampled = process.env.BENCH_PROFILE_HEAP !== 'promoted';
/** One heap sample per this many bytes allocated, on average. */
const HEAP_SAMPLING_BYTES = 16 * 1024;
if (dir) {
  // Every sample includes the 1 ms sampling interval itself; it is subtracted, leaving the delay.
  const RESOLUTION_MS = 1;
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  const GC_KINDS = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  };
  let gc = {};
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = GC_KINDS[entry.detail?.kind] ?? 'other';
      const seen = (gc[kind] ??= { count: 0, ms: 0, maxMs: 0 });
      seen.count++;
      seen.ms += entry.duration;
      seen.maxMs = Math.max(seen.maxMs, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);
  let session = null;
  const workers = profileDir && !heapProfile ? workerProfiles(profileDir) : null;
  // Node 20 names every thread "node", so a worker's thread is told apart by when it appeared and
  // what it did: the threads new at its 'worker' event are its candidates (the worker's own, and on
  // a busy machine the libuv pool threads its start-up may already have created), and the report
  // names the one of them that has used the most CPU (a pool thread that merely appeared has none).
  const tids = () => readdirSync('/proc/self/task').map(Number);
  const cpuTicks = (tid) => {
    try {
      const [utime, stime] = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
        .split(') ')[1]
        .split(' ')
        .slice(11, 13);
      return Number(utime) + Number(stime);
    } catch {
      return -1; // ended
    }
  };
  let seen = new Set(tids());
  const candidatesPerWorker = [];
  process.on('worker', () => {
    const now = tids();
    candidatesPerWorker.push(now.filter((tid) => !seen.has(tid)));
    seen = new Set(now);
  });
  const busiest = (candidates) =>
    candidates.reduce((best, tid) => (cpuTicks(tid) > cpuTicks(best) ? tid : best), candidates[0]);
  const workerThreadIds = () => candidatesPerWorker.filter((candidates) => candidates.length > 0).map(busiest);
  process.on('SIGUSR2', () => {
    const delay = {
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      mean: ms(histogram.mean),
    };
    writeFileSync(
      join(dir, `probe-${process.pid}.json`),
      JSON.stringify({
        pid: process.pid,
        argv: process.argv,
        rss: process.memoryUsage.rss(),
        memory: process.memoryUsage(),
        workerThreads: workerThreadIds(),
        delay,
        gc,
      }),
    );
    gc = {};
    histogram.reset();
    if (session) workers?.cut();
    if (profileDir && !session) {
      session = new Session();
      session.connect();
      if (heapProfile) {
        session.post('HeapProfiler.enable');
        session.post('HeapProfiler.startSampling', {
          samplingInterval: HEAP_SAMPLING_BYTES,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: youngGarbageSampled,
        });
      } else {
        session.post('Profiler.enable');
        session.post('Profiler.start');
        workers?.attach(session);
      }
    }
  });
  // A same-thread inspector session answers synchronously, so the profile is written during exit.
  process.on('exit', () => {
    const [method, extension] = heapProfile
      ? ['HeapProfiler.stopSampling', 'heapprofile']
      : ['Profiler.stop', 'cpuprofile'];
    session?.post(method, (err, result) => {
      if (!err) writeFileSync(join(profileDir, `gateway-${process.pid}.${extension}`), JSON.stringify(result.profile));
    });
  });
}

/**
 * CPU profiles of the process's worker threads, taken through the main thread's inspector session
 * (NodeWorker domain): `attach` starts a profiler in each worker there is and each one started
 * later; `cut` ends every worker's current profile into a file and starts the next.
 */
function workerProfiles(profileDir) {
  let session = null;
  let nextId = 0;
  const replies = new Map();
  /** Attached workers by inspector session id: their worker id and how many profiles they wrote. */
  const attached = new Map();
  const send = (sessionId, method) =>
    new Promise((resolve) => {
      const id = ++nextId;
      replies.set(id, { sessionId, resolve });
      session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method }) });
    });
  const start = (sessionId) => send(sessionId, 'Profiler.enable').then(() => send(sessionId, 'Profiler.start'));
  return {
    attach(mainSession) {
      session = mainSession;
      session.on('NodeWorker.attachedToWorker', ({ params }) => {
        attached.set(params.sessionId, { workerId: params.workerInfo.workerId, written: 0 });
        void start(params.sessionId);
      });
      session.on('NodeWorker.detachedFromWorker', ({ params }) => {
        attached.delete(params.sessionId);
        // A worker gone before it answered answers nothing: its requests end without a result.
        for (const [id, waiting] of replies) {
          if (waiting.sessionId !== params.sessionId) continue;
          replies.delete(id);
          waiting.resolve({});
        }
      });
      session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
        const reply = JSON.parse(params.message);
        replies.get(reply.id)?.resolve(reply);
        replies.delete(reply.id);
      });
      session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    },
    cut() {
      for (const [sessionId, worker] of attached) {
        void send(sessionId, 'Profiler.stop').then((reply) => {
          if (!reply.result) return;
          const name = `worker-${process.pid}-${worker.workerId}-${++worker.written}.cpuprofile`;
          writeFileSync(join(profileDir, name), JSON.stringify(reply.result.profile));
          return send(sessionId, 'Profiler.start');
        });
      }
    },
  };
}
