import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Integration tests talk to the real MySQL / Redis / RabbitMQ, in a test database, Redis db index
// and queue prefix of their own (set by scripts/test.sh, defaulted in lib/test/setup-env.ts).
export default defineConfig({
  resolve: { alias: { '@': fileURLToPath(new URL('./', import.meta.url)) } },
  test: {
    include: ['lib/**/*.test.ts', 'workers/**/*.test.ts', 'app/**/*.test.ts', 'scripts/**/*.test.ts', 'e2e/**/*.test.ts'],
    setupFiles: ['lib/test/setup-env.ts'],
    globalSetup: ['lib/test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
