import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { build, type Plugin } from 'esbuild'
import { bundleLoaderThread } from '../../scripts/loader-bundle'

const root = join(import.meta.dirname, '..', '..')
let dir: string | null = null

/**
 * JSON a dependency ships (the SPDX id list) goes into the bundle: esbuild drops the import
 * attribute of an external import, and Node refuses a JSON module imported without it.
 */
const bundledJson: Plugin = {
  name: 'bundled-json',
  setup(build) {
    build.onResolve({ filter: /\.json$/ }, (args) => ({
      path: createRequire(join(args.resolveDir, 'index.js')).resolve(args.path),
    }))
  },
}

/**
 * vitest globalSetup: the admin CLI and the advisory loader thread bundled once per run from the
 * current sources, handed to the workers through the environment (TEST_ADMIN_CLI,
 * TEST_ADVISORY_LOADER). Started from sources, each CLI process and each loader thread would
 * compile the TypeScript again through tsx: about 0.7 s and 0.45 s of CPU more per start, which
 * the suite pays dozens of times. test/api/admin-cli.test.ts still runs the CLI as `npm run admin`
 * does (tsx). The directory is inside node_modules so the bundles resolve their dependencies.
 */
export async function setup(): Promise<void> {
  if (process.env.TEST_ADMIN_CLI && process.env.TEST_ADVISORY_LOADER) return
  const cache = join(root, 'node_modules', '.cache', 'package-firewall-tests')
  mkdirSync(cache, { recursive: true })
  dir = mkdtempSync(join(cache, 'run-'))
  const admin = join(dir, 'admin.mjs')
  // Beside the CLI: archive-loader.ts looks for the loader thread next to the running script, as
  // it finds advisory-loader.mjs next to the built server's index.mjs.
  const loader = join(dir, 'advisory-loader.mjs')
  await Promise.all([
    build({
      // `admin` is admin.mjs in `dir`. Split, so the modules the sources import on demand (the
      // Redis backend and ioredis, undici) stay in chunks of their own and load only when used,
      // as in the built server: one bundle hoists every import to the start of every CLI run.
      entryPoints: { admin: join(root, 'scripts', 'admin.ts') },
      outdir: dir,
      splitting: true,
      chunkNames: 'admin-chunks/[name]-[hash]',
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'warning',
      plugins: [bundledJson],
    }),
    bundleLoaderThread(join(root, 'server', 'advisories', 'loader-thread.ts'), loader),
  ])
  process.env.TEST_ADMIN_CLI = admin
  process.env.TEST_ADVISORY_LOADER = loader
}

export async function teardown(): Promise<void> {
  if (dir) rmSync(dir, { recursive: true, force: true })
}
