import { randomUUID } from 'node:crypto';

/** Opaque, unguessable identifier for any stored resource. */
export const newId = (): string => randomUUID();

/** Request ids travel in X-Gateway-Request-ID and in error bodies of 500s. */
export const newRequestId = (): string => `req_${randomUUID().replace(/-/g, '')}`;
