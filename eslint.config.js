import js from '@eslint/js';
import { existsSync, readdirSync } from 'node:fs';
import tseslint from 'typescript-eslint';

// Every app under apps/ is the workspace package @agentgw/<directory>.
const APPS = readdirSync(new URL('./apps', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(new URL(`./apps/${entry.name}/package.json`, import.meta.url)))
  .map((entry) => entry.name);
// The all-in-one composes the six service definitions: the one app allowed to import other apps.
const HOST_APP = 'gateway';

// No app imports another app (by package name or by a relative path into it): shared code lives in packages/.
/** The rule that keeps `app` from importing another app; apps with a config of their own (the dashboard) add it too. */
export const crossAppImportRules = (app) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        {
          group: APPS.filter((other) => other !== app).flatMap((other) => [
            `@agentgw/${other}`,
            `@agentgw/${other}/*`,
            `**/apps/${other}/**`,
            `../../${other}/**`,
          ]),
          message: `apps/${app} must not import another app: move what both need into packages/ (only apps/${HOST_APP}, the all-in-one host, composes apps).`,
        },
      ],
    },
  ],
});
const noCrossAppImports = APPS.filter((app) => app !== HOST_APP).map((app) => ({
  files: [`apps/${app}/**/*.{ts,tsx,js,mjs,cjs}`],
  rules: crossAppImportRules(app),
}));

export default tseslint.config(
  // The console is linted by its own config (apps/dashboard/eslint.config.js: React, accessibility).
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.turbo/**',
      '**/coverage/**',
      '**/.gateway-data/**',
      // The conformance project's everything-server, extracted at run time (not ours; git-ignored).
      '**/.conformance-everything/**',
      'apps/dashboard/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  // Type-aware rules for TypeScript, typed by the root tsconfig.json: one program for every package
  // (a program per package type-checked the packages each imports again; the console's own config
  // points its files at its own). Only promise and assertion rules, the ones that catch real bugs.
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
    },
  },
  // Plain JavaScript here (configs, scripts) runs on Node.
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' } },
  },
  {
    files: ['**/*.test.ts', '**/cli/**', '**/scripts/**', '**/bench/**'],
    rules: { 'no-console': 'off' },
  },
  ...noCrossAppImports,
);
