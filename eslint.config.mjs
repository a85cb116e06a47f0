import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';

const config = [
  ...nextVitals,
  ...nextTs,
  { ignores: ['.next/**', 'node_modules/**', 'next-env.d.ts', 'test-results/**', 'playwright-report/**'] },
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      // After login/logout we want a full navigation so server components re-read the session.
      '@next/next/no-location-assign-relative-destination': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // lib/ is shared with the worker: no Next imports outside the lib/web glue.
    files: ['lib/**/*.ts', 'workers/**/*.ts'],
    ignores: ['lib/web/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['next/*', 'next'], message: 'lib/ must not import Next (the worker shares it); Next glue lives in lib/web.' }] }],
    },
  },
];

export default config;
