import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';

const config = [
  ...nextVitals,
  ...nextTs,
  { ignores: ['.next/**', 'node_modules/**', 'next-env.d.ts', 'test-results/**', 'playwright-report/**'] },
  {
    rules: {
      // After login/logout we want a full navigation so server components re-read the session.
      '@next/next/no-location-assign-relative-destination': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // No import loops between modules (folder-level loops: scripts/layering.unit.test.ts). Layering
    // in docs/recipes.md#layering.
    files: ['lib/**/*.ts', 'app/**/*.ts', 'app/**/*.tsx', 'workers/**/*.ts'],
    rules: { 'import/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // lib/ is shared with the worker: no Next imports outside the lib/web glue; lib/ never reaches
    // up into app/; product code never imports test support (e2e/).
    files: ['lib/**/*.ts', 'workers/**/*.ts'],
    ignores: ['lib/web/**', '**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['next/*', 'next'], message: 'lib/ must not import Next (the worker shares it); Next glue lives in lib/web.' },
            { group: ['@/e2e/*', '**/e2e/*'], message: 'product code must not import test support (e2e/support).' },
          ],
        },
      ],
    },
  },
  {
    files: ['lib/web/**/*.ts', 'lib/web/**/*.tsx', 'app/**/*.ts', 'app/**/*.tsx'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@/e2e/*', '**/e2e/*'], message: 'product code must not import test support (e2e/support).' }] }],
    },
  },
  {
    files: ['lib/**/*.ts'],
    ignores: ['lib/web/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['next/*', 'next'], message: 'lib/ must not import Next (the worker shares it); Next glue lives in lib/web.' },
            { group: ['@/app/*', '**/app/*'], message: 'lib/ must not import app/: app/ and workers/ pass what lib/ needs in. A route-level test lives in e2e/routes/<domain>/.' },
            { group: ['@/e2e/*', '**/e2e/*'], message: 'product code must not import test support (e2e/support).' },
          ],
        },
      ],
    },
  },
  {
    // Tests under lib/ test lib/; a test that drives app/api routes lives in e2e/routes/.
    files: ['lib/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@/app/*', '**/app/*'], message: 'a route-level test lives in e2e/routes/<domain>/.' }] }],
    },
  },
];

export default config;
