import type { MiddlewareHandler } from 'hono';
import { ValidationError } from '../errors.js';

/**
 * Deepest nesting of arrays/objects accepted in a JSON body. Real payloads (provider configs,
 * tool params) stay far below; thousands of levels overflowed the stack of recursive code.
 */
export const MAX_JSON_DEPTH = 64;

const tooDeep = (maxDepth: number) => new ValidationError(`JSON body nested deeper than ${maxDepth} levels`, { field: '(body)' });

/**
 * Tracks nesting over JSON text fed in pieces: one pass, no recursion, no parsing, constant
 * memory, so it is safe on hostile input before JSON.parse ever sees it.
 */
class JsonDepthScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly maxDepth: number) {}

  /** Throws a 400 as soon as the text seen so far nests deeper than the cap. */
  feed(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (ch === 0x5c) this.escaped = true;
        else if (ch === 0x22) this.inString = false;
      } else if (ch === 0x22) {
        this.inString = true;
      } else if (ch === 0x7b || ch === 0x5b) {
        if (++this.depth > this.maxDepth) throw tooDeep(this.maxDepth);
      } else if (ch === 0x7d || ch === 0x5d) {
        this.depth--;
      }
    }
  }
}

/** Throws a 400 when the JSON text nests deeper than `maxDepth`. */
export function assertJsonDepth(text: string, maxDepth = MAX_JSON_DEPTH): void {
  new JsonDepthScanner(maxDepth).feed(text);
}

export interface JsonDepthLimitOptions {
  maxDepth?: number;
  /**
   * Bytes scanned at most (default 1 MiB, the default body limit). The scan reads a clone of the
   * body, which buffers what it reads for the handler; past this budget it stops rather than
   * buffer more than the size limits would let a handler read. `parseJson` still checks in full.
   */
  maxScanBytes?: number;
}

/**
 * Middleware refusing JSON bodies nested deeper than the cap (400) before any handler or
 * validator parses them. It scans a clone of the request, so handlers that hand `c.req.raw` on
 * (the MCP transports) can still read the body.
 */
export const jsonDepthLimit =
  (options: JsonDepthLimitOptions = {}): MiddlewareHandler =>
  async (c, next) => {
    const type = c.req.header('content-type') ?? '';
    const body = c.req.raw.body && /json/i.test(type) ? c.req.raw.clone().body : null;
    if (body) {
      const scanner = new JsonDepthScanner(options.maxDepth ?? MAX_JSON_DEPTH);
      const budget = options.maxScanBytes ?? 1024 * 1024;
      const decoder = new TextDecoder();
      const reader = body.getReader();
      let scanned = 0;
      try {
        for (let chunk = await reader.read(); !chunk.done && scanned < budget; chunk = await reader.read()) {
          const piece = chunk.value.subarray(0, budget - scanned);
          scanned += piece.byteLength;
          scanner.feed(decoder.decode(piece, { stream: true }));
        }
      } finally {
        // Not awaited: cancelling one branch of a tee settles only once the other branch is done too.
        reader.cancel().catch(() => undefined);
      }
    }
    await next();
  };
