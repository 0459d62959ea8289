import { McpUpstreamError } from './errors.js';
import type { CallerSignal } from './upstream-call.js';

/**
 * One call's time limit and its caller's cancellation, without an AbortController per call:
 * the timer or the caller's signal runs the hooks of the exchange in flight (abort the HTTP
 * request, tell a session upstream it was cancelled) with the McpUpstreamError that ends it.
 */
export class Deadline {
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly hooks: ((err: McpUpstreamError) => void)[] = [];
  private ended: McpUpstreamError | null = null;
  private readonly onCallerGone = () => this.end(new McpUpstreamError('aborted', 'the caller went away'));

  constructor(
    timeoutMs: number,
    private readonly caller: CallerSignal | undefined,
  ) {
    if (caller?.aborted) {
      this.ended = new McpUpstreamError('aborted', 'the caller went away');
      return;
    }
    this.timer = setTimeout(
      () => this.end(new McpUpstreamError('timeout', `upstream did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    if (caller instanceof AbortSignal) caller.addEventListener('abort', this.onCallerGone, { once: true });
    else caller?.once('abort', this.onCallerGone);
  }

  /** The error the call ended with (timeout or the caller gone), or null while it runs. */
  get reason(): McpUpstreamError | null {
    return this.ended;
  }

  /** Runs `hook` when the call ends early (at once when it already has); returns its removal. */
  onEnd(hook: (err: McpUpstreamError) => void): () => void {
    if (this.ended) {
      hook(this.ended);
      return () => undefined;
    }
    this.hooks.push(hook);
    return () => {
      const at = this.hooks.indexOf(hook);
      if (at >= 0) this.hooks.splice(at, 1);
    };
  }

  /** Stops the timer and stops listening to the caller. */
  dispose(): void {
    clearTimeout(this.timer);
    if (this.caller instanceof AbortSignal) this.caller.removeEventListener('abort', this.onCallerGone);
    else this.caller?.off('abort', this.onCallerGone);
  }

  /** What a failure of the call is reported as: its own McpUpstreamError, the deadline's, else a protocol failure. */
  translate(err: unknown): McpUpstreamError {
    if (err instanceof McpUpstreamError) return err;
    if (this.ended) return this.ended;
    return new McpUpstreamError('protocol', 'upstream did not speak MCP as expected');
  }

  private end(err: McpUpstreamError): void {
    if (this.ended) return;
    this.ended = err;
    for (const hook of this.hooks.splice(0)) hook(err);
  }
}
