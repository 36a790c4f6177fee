import { defineConfig } from 'vitest/config'

/**
 * Files that start no process, server, Redis connection or browser, and leave no module state
 * behind that another file could read (no locator set, fake timers restored after each test):
 * they share their workers' module cache (`isolate: false`). Apart they cost about 0.24 s of CPU
 * each for a fresh worker and fresh imports (the 73 of 2026-11-27: 32 CPU-s isolated, 15 shared).
 * A new file runs isolated until it is listed here.
 */
const SHARED_WORKER_FILES = [
  'test/advisories/{fixture-matching,snapshot-reuse,zip-stream}.test.ts',
  'test/auth/{granting,token-hash,touch-gate}.test.ts',
  'test/common/{cooperative-json,own,size,time-slice}.test.ts',
  'test/dashboard/{client-snippets,inventory-period,units}.test.ts',
  'test/ecosystems/pep440.test.ts',
  'test/exception-requests/{machine,package-facts}.test.ts',
  'test/firewall/*.test.ts',
  'test/inventory/units.test.ts',
  'test/machines/*.test.ts',
  'test/net/address-policy.test.ts',
  'test/observability/{live-registry,log-scrub,memory-trend,metric-labels,refusal-audit-bounds,requests-in-flight}.test.ts',
  'test/registry/{advisory-source,cache-bounds,evaluation-context,maven-metadata,multipart,npm-facts}.test.ts',
  'test/registry/{npm-notice-packument,npm-packument,npm-whole-package-block,nupkg,proxy-units}.test.ts',
  'test/registry/{pypi-html-anchors,upload-identity}.test.ts',
  'test/storage/{memory-bounds,recent-lookups}.test.ts',
  'test/storage/secrets/cipher.test.ts',
  'test/webhooks/{batching-retry,delivery-leases,document-sync,event-fit,event-types,json-schema}.test.ts',
  'test/webhooks/{overflow,promise-actor,settings,signing,ssrf,work-limit}.test.ts',
]

// The 50-second multi-process soak runs after the suite, in `npm run soak:ci` (vitest.soak.config.ts).
// The cost suite times /healthz and runs alone afterwards (vitest.costs.config.ts).
const EXCLUDED = ['test/soak/**', 'test/security/costs.test.ts', '**/node_modules/**']

/**
 * Every value a Redis transaction keeps the text of is frozen, in the tests and the servers they
 * start (storage/stored-text.ts): a change to one throws where it is made.
 */
const ENV = { STORAGE_FREEZE_KEPT: '1' }

export default defineConfig({
  test: {
    // Started once per run, for both projects (they inherit the environment these set).
    globalSetup: [
      'test/support/global-redis.ts',
      'test/support/global-redis-cluster.ts',
      'test/support/global-bundles.ts',
      'test/support/global-chromium.ts',
    ],
    // Most files wait on other processes (the built server, Chromium, package clients, Redis):
    // four at a time keep the two cores busy where two left about half of them idle.
    maxWorkers: 4,
    fileParallelism: true,
    projects: [
      {
        test: {
          name: 'shared',
          include: SHARED_WORKER_FILES,
          exclude: EXCLUDED,
          pool: 'forks',
          isolate: false,
          env: ENV,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts'],
          exclude: [...EXCLUDED, ...SHARED_WORKER_FILES],
          pool: 'forks',
          env: ENV,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
})
