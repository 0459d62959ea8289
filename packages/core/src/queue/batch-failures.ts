/**
 * Thrown by a batch handler to fail only some jobs of its batch (by index in the batch): the
 * others count as done. BullMQ honours it; the in-process queue fails the whole batch.
 */
export class JobBatchFailures extends Error {
  constructor(readonly failures: ReadonlyMap<number, Error>) {
    super(`${failures.size} job(s) of the batch failed: ${[...failures.values()][0]?.message ?? ''}`);
    this.name = 'JobBatchFailures';
  }
}
