#!/usr/bin/env node
// Runs the TypeScript CLI in place through tsx (no build step needed).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
