/**
 * The client capabilities a gateway passes on to upstreams: only the server-to-client features
 * it relays (sampling, elicitation, roots), each reduced to the sub-capabilities the spec names.
 * Anything else a client declares is dropped, so what reaches an upstream is honest and the set
 * of distinct capability sets (sessions and cached lists are kept per set) is small and finite.
 */

/** Relayed features and the sub-capabilities kept of each (objects become `{}`; `listChanged` a boolean). */
const RELAYED: Readonly<Record<string, readonly string[]>> = {
  sampling: ['context', 'tools'],
  elicitation: ['form', 'url'],
  roots: ['listChanged'],
  // The tasks extension (SEP-2663): a gateway that routes tasks/* lets its upstreams answer with tasks.
  extensions: ['io.modelcontextprotocol/tasks'],
};
/** The relayed features in key order, so equal sets come out alike (sorted once, not per request). */
const RELAYED_FEATURES = Object.keys(RELAYED).sort();

/** No relayed capability: what a client that declared none (or nothing relayable) is passed on as. */
export const NO_CLIENT_CAPABILITIES: Readonly<Record<string, unknown>> = Object.freeze({});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The relayable part of what a client declared (`initialize` capabilities or the 2026-07-28 `_meta`), in a canonical form. */
export function relayableCapabilities(declared: unknown): Record<string, unknown> {
  if (!isObject(declared)) return NO_CLIENT_CAPABILITIES;
  let out: Record<string, unknown> | null = null;
  for (const feature of RELAYED_FEATURES) {
    const value = declared[feature];
    if (!isObject(value)) continue;
    const kept: Record<string, unknown> = {};
    for (const sub of RELAYED[feature]!) {
      if (sub === 'listChanged') {
        if (value[sub] === true) kept[sub] = true;
      } else if (isObject(value[sub])) kept[sub] = {};
    }
    (out ??= {})[feature] = kept;
  }
  return out ?? NO_CLIENT_CAPABILITIES;
}

/** A short stable name of a capability set (sessions and lists are kept per set); '' for none. */
export function clientCapabilitiesKey(capabilities: Record<string, unknown>): string {
  const features = Object.keys(capabilities);
  if (features.length === 0) return '';
  return features
    .sort()
    .map((feature) => {
      const value = capabilities[feature];
      const subs = isObject(value) ? Object.keys(value).sort() : [];
      return subs.length === 0 ? feature : `${feature}(${subs.join(',')})`;
    })
    .join('+');
}
