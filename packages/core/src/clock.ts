/** Injected wherever time matters so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The clock's time in epoch milliseconds, without a Date on the system clock (hot caches read it per lookup). */
export const epochMs = (clock: Clock): number => (clock === systemClock ? Date.now() : clock.now().getTime());

export class ManualClock implements Clock {
  private t: number;
  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.t = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(at: Date | number): void {
    this.t = typeof at === 'number' ? at : at.getTime();
  }
}
