import { defineConfig } from 'vitest/config'

// The cost suite times /healthz while the worst allowed inputs are processed: it runs alone, after
// the rest of `npm test`, so no other test file shares the machine's two cores with it.
export default defineConfig({
  test: {
    include: ['test/security/costs.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
  },
})
