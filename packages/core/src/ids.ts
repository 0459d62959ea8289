import { randomUUID } from 'node:crypto';

/** Opaque, unguessable identifier for any stored resource. */
export const newId = (): string => randomUUID();

/**
 * A UUIDv7 (RFC 9562: 48-bit Unix milliseconds, then 74 random bits) for rows written at a high
 * rate: keys that grow with time append at a b-tree's right edge, where random ones touch a leaf
 * anywhere in the index per row (the audit log's three key indexes: docs/benchmarks.md). Still
 * unguessable; it reveals its creation time, so it is for records that show it anyway.
 */
export const newTimeOrderedId = (now: number = Date.now()): string => {
  const ms = now.toString(16).padStart(12, '0');
  // A v4's last 22 characters keep its RFC variant bits; the version digit becomes 7.
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${randomUUID().slice(15)}`;
};

/** Request ids travel in X-Gateway-Request-ID and in error bodies of 500s. */
export const newRequestId = (): string => `req_${randomUUID().replace(/-/g, '')}`;
