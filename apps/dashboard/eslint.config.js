import jsxA11y from 'eslint-plugin-jsx-a11y';
import reactHooks from 'eslint-plugin-react-hooks';
import root, { crossAppImportRules } from '../../eslint.config.js';

// The repository's rules plus the strict accessibility rules for every component, and the
// rules of hooks, so `pnpm test` fails on an inaccessible or mis-hooked component.
export default [
  ...root,
  { ignores: ['e2e/screenshots/**', 'dist-*.tmp/**', 'dist-*.old/**'] },
  // The root config's file globs are relative to the root, so the no-cross-app rule is added here again.
  { files: ['**/*.{ts,tsx,js,mjs}'], rules: crossAppImportRules('dashboard') },
  // The console's own programs (the root config types files by the root tsconfig.json, which leaves
  // the console out): tsconfig.json for the app, tsconfig.node.json for the browser harness and
  // the Vite/Vitest configs.
  {
    files: ['src/**/*.{ts,tsx}'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['e2e/**/*.ts', 'scripts/**/*.ts', '*.ts'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.node.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: { console: 'readonly', URL: 'readonly' } },
  },
  {
    files: ['src/**/*.tsx'],
    ...jsxA11y.flatConfigs.strict,
  },
  {
    files: ['src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
];
