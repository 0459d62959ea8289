import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../clock.js';
import { MemoryJobQueue } from './memory.js';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What only the in-process adapter does: its time is the injected clock. */
describe('MemoryJobQueue with a ManualClock', () => {
  it('fires a delayed job once the clock passes its time, not before', async () => {
    const clock = new ManualClock();
    const queue = new MemoryJobQueue({ clock });
    try {
      const fired: string[] = [];
      await queue.consume('confirmation-timeout', async (jobs) => {
        fired.push(...jobs.map((j) => j.confirmationId));
      });
      await queue.enqueue('confirmation-timeout', { confirmationId: 'c1' }, { delayMs: 5 * 60_000 });
      await wait(80);
      expect(fired).toEqual([]);
      clock.advance(5 * 60_000 - 1);
      await wait(80);
      expect(fired).toEqual([]);
      clock.advance(1);
      await expect.poll(() => fired, { timeout: 1000, interval: 10 }).toEqual(['c1']);
    } finally {
      await queue.close();
    }
  });

  it('waits for the clock before retrying', async () => {
    const clock = new ManualClock();
    const queue = new MemoryJobQueue({ clock, backoffMs: 1000 });
    try {
      let calls = 0;
      await queue.consume('push', async () => {
        calls += 1;
        if (calls === 1) throw new Error('first attempt fails');
      });
      await queue.enqueue('push', { userId: 'u1', title: 't', body: 'b', data: {} });
      await expect.poll(() => calls, { timeout: 1000, interval: 10 }).toBe(1);
      await wait(80);
      expect(calls).toBe(1);
      clock.advance(1000);
      await expect.poll(() => calls, { timeout: 1000, interval: 10 }).toBe(2);
    } finally {
      await queue.close();
    }
  });

  it('refuses work once closed', async () => {
    const queue = new MemoryJobQueue();
    await queue.close();
    await expect(queue.enqueue('push', { userId: 'u1', title: 't', body: 'b', data: {} })).rejects.toThrow(/closed/);
  });
});

/** On the system clock the scheduler sleeps until the soonest delayed job instead of polling. */
describe('MemoryJobQueue on the system clock', () => {
  it('runs a sooner delayed job first although a later one armed the timer', async () => {
    const queue = new MemoryJobQueue();
    try {
      const fired: string[] = [];
      await queue.consume('confirmation-timeout', async (jobs) => {
        fired.push(...jobs.map((j) => j.confirmationId));
      });
      await queue.enqueue('confirmation-timeout', { confirmationId: 'hour' }, { delayMs: 3_600_000 });
      await queue.enqueue('confirmation-timeout', { confirmationId: 'soon' }, { delayMs: 30 });
      // Armed for the hour only, 'soon' would wait an hour: the poll's deadline would fail it.
      await expect.poll(() => fired, { timeout: 2000, interval: 10 }).toEqual(['soon']);
    } finally {
      await queue.close();
    }
  });
});

/** A lane holds a bounded amount of unsettled JSON: producers wait for their consumer instead of piling jobs up in memory. */
describe('MemoryJobQueue backpressure', () => {
  const job = (id: string) => ({ confirmationId: id.padEnd(40, '.') });
  const size = JSON.stringify(job('x')).length;

  it('makes an enqueue past the bound wait until a job settles, then takes it', async () => {
    const queue = new MemoryJobQueue({ maxLaneChars: 2 * size });
    let release!: () => void;
    const handled: string[] = [];
    await queue.consume('confirmation-timeout', async ([data]) => {
      handled.push(data!.confirmationId.replace(/\.+$/, ''));
      await new Promise<void>((resolve) => (release = resolve));
    });
    await queue.enqueue('confirmation-timeout', job('a'));
    await queue.enqueue('confirmation-timeout', job('b'));
    let third = false;
    const enqueued = queue.enqueue('confirmation-timeout', job('c')).then(() => (third = true));
    await wait(30);
    expect(third).toBe(false);
    expect(handled).toEqual(['a']);
    release();
    await enqueued;
    expect(third).toBe(true);
    await vi.waitFor(() => expect(handled).toEqual(['a', 'b']));
    release();
    await vi.waitFor(() => expect(handled).toEqual(['a', 'b', 'c']));
    release();
    await queue.close();
  });

  it('admits waiting enqueues oldest first: a small job does not pass a large one that waits', async () => {
    const sized = (id: string, chars: number) => ({ confirmationId: id.padEnd(chars, '.') });
    const unit = JSON.stringify(sized('x', 100)).length;
    const queue = new MemoryJobQueue({ maxLaneChars: 3 * unit });
    const releases: (() => void)[] = [];
    await queue.consume('confirmation-timeout', () => new Promise<void>((resolve) => releases.push(resolve)));
    await queue.enqueue('confirmation-timeout', sized('held', 2 * unit - 40));
    const admitted: string[] = [];
    const large = queue
      .enqueue('confirmation-timeout', sized('large', 2 * unit - 40))
      .then(() => admitted.push('large'));
    await wait(5);
    // Room for it now, but the large job came first.
    const small = queue.enqueue('confirmation-timeout', sized('small', 100)).then(() => admitted.push('small'));
    await wait(10);
    expect(admitted).toEqual([]);
    await vi.waitFor(() => expect(releases).toHaveLength(1));
    releases[0]!();
    await Promise.all([large, small]);
    expect(admitted).toEqual(['large', 'small']);
    await vi.waitFor(() => expect(releases).toHaveLength(2));
    releases[1]!();
    await vi.waitFor(() => expect(releases).toHaveLength(3));
    releases[2]!();
    await queue.close();
  });

  it('takes a job larger than the bound into an empty lane, and refuses a waiting enqueue once closed', async () => {
    const queue = new MemoryJobQueue({ maxLaneChars: size - 1 });
    await queue.enqueue('confirmation-timeout', job('big'));
    const waiting = queue.enqueue('confirmation-timeout', job('next'));
    await wait(10);
    await queue.close();
    await expect(waiting).rejects.toThrow(/closed/);
  });
});

describe('MemoryJobQueue hand-over (EnqueueOptions.handOver)', () => {
  it('gives the handler the value itself, every attempt, where a job without it is a fresh JSON copy', async () => {
    const queue = new MemoryJobQueue({ backoffMs: 1 });
    const handedOver = { confirmationId: 'handed-over' };
    const copied = { confirmationId: 'copied' };
    const seen: unknown[] = [];
    await queue.consume('confirmation-timeout', async ([data]) => {
      seen.push(data);
      if (seen.length % 2 === 1) throw new Error('retry me');
    });
    await queue.enqueue('confirmation-timeout', handedOver, { handOver: { chars: 100 }, attempts: 2 });
    await vi.waitFor(() => expect(seen).toHaveLength(2));
    expect(seen[0]).toBe(handedOver);
    expect(seen[1]).toBe(handedOver);
    // Its top level is frozen: a handler that changed it would throw, not corrupt a retry.
    expect(Object.isFrozen(handedOver)).toBe(true);
    await queue.enqueue('confirmation-timeout', copied, { attempts: 2 });
    await vi.waitFor(() => expect(seen).toHaveLength(4));
    expect(seen[2]).toEqual(copied);
    expect(seen[2]).not.toBe(copied);
    expect(seen[3]).not.toBe(seen[2]);
    await queue.close();
  });

  it("counts a handed-over job by its stated size against the lane's bound", async () => {
    const queue = new MemoryJobQueue({ maxLaneChars: 1_000 });
    let release!: () => void;
    let handled = 0;
    await queue.consume('confirmation-timeout', () => {
      handled += 1;
      return new Promise<void>((resolve) => (release = resolve));
    });
    // Its JSON is a few dozen characters, but it says 600: a second such job must wait.
    await queue.enqueue('confirmation-timeout', { confirmationId: 'a' }, { handOver: { chars: 600 } });
    let second = false;
    const enqueued = queue
      .enqueue('confirmation-timeout', { confirmationId: 'b' }, { handOver: { chars: 600 } })
      .then(() => (second = true));
    await wait(20);
    expect(second).toBe(false);
    release();
    await enqueued;
    expect(second).toBe(true);
    await vi.waitFor(() => expect(handled).toBe(2));
    release();
    await queue.close();
  });
});

describe('MemoryJobQueue batches by size (ConsumeOptions.batchChars)', () => {
  it('fills a batch with as many small jobs as its characters allow, cuts at the bound, and sends a larger job alone', async () => {
    const queue = new MemoryJobQueue();
    const batches: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await queue.consume(
      'confirmation-timeout',
      async (jobs) => {
        batches.push(jobs.map((j) => j.confirmationId));
        await gate;
      },
      // A count of 2 would cut the small jobs into pairs: the size bound replaces it.
      { batchSize: 2, batchChars: 1_000, batchWaitMs: 60_000 },
    );
    const job = (id: string, chars: number) =>
      queue.enqueue('confirmation-timeout', { confirmationId: id }, { handOver: { chars } });
    // The first batch starts once 1,000 characters wait: jobs a–j (100 each); k waits behind it.
    for (const id of 'abcdefghijk') await job(id, 100);
    await vi.waitFor(() => expect(batches).toHaveLength(1));
    expect(batches[0]).toEqual([...'abcdefghij']);
    // A job past the bound goes alone; what came before it forms its own batch.
    await job('big', 5_000);
    await job('l', 100);
    release();
    await vi.waitFor(() => expect(batches).toHaveLength(3));
    expect(batches[1]).toEqual(['k']);
    expect(batches[2]).toEqual(['big']);
    // 'l' waits for more (60 s) until a barrier asks for what is there.
    await wait(20);
    expect(batches).toHaveLength(3);
    expect(await queue.barrier(['confirmation-timeout'], 1_000)).toBe(true);
    expect(batches[3]).toEqual(['l']);
    await queue.close();
  });
});
