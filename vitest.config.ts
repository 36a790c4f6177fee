import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The 50-second multi-process soak runs after the suite, in `npm run soak:ci` (vitest.soak.config.ts).
    // The cost suite times /healthz and runs alone afterwards (vitest.costs.config.ts).
    exclude: ['test/soak/**', 'test/security/costs.test.ts', '**/node_modules/**'],
    globalSetup: [
      'test/support/global-redis.ts',
      'test/support/global-redis-cluster.ts',
      'test/support/global-bundles.ts',
      'test/support/global-chromium.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
})
