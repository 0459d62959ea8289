import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.js';

// Unit tests only; the browser tests run with e2e/vitest.e2e.config.ts (`pnpm e2e`).
export default mergeConfig(shared, defineConfig({ test: { exclude: [...configDefaults.exclude, 'e2e/**'] } }));
