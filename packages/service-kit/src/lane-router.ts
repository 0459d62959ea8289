import type { Result, Router } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';

/** Hono's default: RegExpRouter when it accepts the whole table, TrieRouter otherwise. */
const smartRouter = <T>(): Router<T> => new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] });

/** A lane: a literal path prefix, matched on segment boundaries, with a router of its own. */
interface Lane<T> {
  prefix: string;
  segments: readonly string[];
  router: Router<T>;
}

/** How a route pattern relates to a lane's prefix. */
type Reach = 'inside' | 'may-enter' | 'outside';

/**
 * Whether a pattern can match paths under `lane` (`may-enter`), only such paths (`inside`), or none
 * (`outside`). Conservative: what the segments alone do not settle (wildcards, optional or
 * regex parameters, which may span or skip segments) may enter and may leave.
 */
function reachOf(pattern: string, lane: readonly string[]): Reach {
  if (pattern === '*' || pattern.includes('{')) return 'may-enter';
  const segments = pattern.split('/').slice(1);
  let literal = true;
  for (let i = 0; i < lane.length; i++) {
    const segment = segments[i];
    if (segment === undefined) return 'outside';
    if (segment.includes('*') || segment.endsWith('?')) return 'may-enter';
    if (segment.startsWith(':')) literal = false;
    else if (segment !== lane[i]) return 'outside';
  }
  return literal ? 'inside' : 'may-enter';
}

/**
 * A Hono router that gives a few hot path prefixes routers of their own. Hono's RegExpRouter
 * matches in one regular expression with prebuilt results, but refuses a whole table for a few
 * ambiguous siblings (the admin API's `/provider-access/:id` beside `/provider-access/agent/:agentId`),
 * and SmartRouter then falls back to TrieRouter for every request: ~25× slower per match, and
 * its fresh match objects outlive the young generation while a call awaits its upstream. Here each
 * lane holds every route that can match a path under its prefix (the shell's middleware included,
 * in the order added), so its table stays small and RegExpRouter accepts it; the rest holds every
 * route that can match elsewhere. A path is matched by exactly one of them, with the same handlers
 * in the same order as one router over the whole table.
 */
export class LaneRouter<T> implements Router<T> {
  name = 'LaneRouter';
  readonly #lanes: Lane<T>[];
  readonly #rest: Router<T> = smartRouter<T>();

  /** `prefixes`: literal paths (no parameters), e.g. `/api/v1/mcp-proxy`; `/api/v1/mcp-proxy/x` is under it, `/api/v1/mcp-proxyx` is not. */
  constructor(prefixes: readonly string[]) {
    this.#lanes = prefixes.map((prefix) => {
      if (!/^(\/[^/:*?{}]+)+$/.test(prefix)) throw new Error(`lane prefix must be a literal path: ${prefix}`);
      return { prefix, segments: prefix.split('/').slice(1), router: smartRouter<T>() };
    });
  }

  add(method: string, path: string, handler: T): void {
    let inside = false;
    for (const lane of this.#lanes) {
      const reach = reachOf(path, lane.segments);
      if (reach === 'outside') continue;
      lane.router.add(method, path, handler);
      inside ||= reach === 'inside';
    }
    if (!inside) this.#rest.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    return this.routerFor(path).match(method, path);
  }

  /** The router a path is matched by (its lane's, or the rest's): exposed so tests can name it. */
  routerFor(path: string): Router<T> {
    for (const lane of this.#lanes) {
      const { prefix } = lane;
      if (path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47))
        return lane.router;
    }
    return this.#rest;
  }
}
