/** Builds the console and puts the result in place of dist/ (never half-written). */
export function buildConsole(): Promise<void>;
/** Whether dist/ is missing or older than the console's sources. */
export function consoleIsStale(): boolean;
