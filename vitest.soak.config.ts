import { defineConfig } from 'vitest/config'

/** `npm run soak:ci`: only the short multi-process soak (test/soak), against the build `npm test` made. */
export default defineConfig({
  test: {
    include: ['test/soak/**/*.test.ts'],
    globalSetup: ['test/support/global-redis.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
})
