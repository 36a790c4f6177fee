import { createRequire } from 'node:module'
import { join } from 'node:path'
import { defineNitroConfig } from 'nitropack/config'
import { bundleLoaderThread } from './scripts/loader-bundle'

// The storage driver is chosen at run time (storage/index.ts), not here: Nitro's
// `storage:` option is fixed at build time.
export default defineNitroConfig({
  preset: 'node-server',
  srcDir: 'server',
  compatibilityDate: '2026-11-01',
  imports: false,
  // API operations live in server/operations (an operation table), not Nitro's file-based api/ dir.
  apiDir: 'nitro-api-unused',
  // A path no route serves, or a route file's uncaught error: a problem or the dashboard's page, not Nitro's JSON.
  errorHandler: '~/app/error-handler',
  output: { dir: process.env.NITRO_OUTPUT_DIR || '.output' },
  // What Node 20 runs (BigInt literals in the Maven ordering included), instead of es2019.
  esbuild: { options: { target: 'node20' } },
  // Required only with LOG_FORMAT=pretty (server/app/logger.ts), which the tracer cannot see.
  externals: { traceInclude: [createRequire(import.meta.url).resolve('pino-pretty')] },
  modules: [
    // The node-server entry with fatal listen errors and a "listening" signal that lease-taking
    // work waits for (server/app/node-server.ts); `nitro dev` keeps its own entry.
    (nitro) => {
      if (nitro.options.preset === 'node-server') nitro.options.entry = join(nitro.options.srcDir, 'app/node-server.ts')
    },
    // advisory-loader.mjs beside index.mjs: the worker thread that reads OSV feed archives off the
    // request thread (server/advisories/archive-loader.ts), bundled on its own (scripts/loader-bundle.ts).
    (nitro) => {
      if (nitro.options.preset !== 'node-server' || nitro.options.dev) return
      nitro.hooks.hook('compiled', () =>
        bundleLoaderThread(
          join(nitro.options.srcDir, 'advisories/loader-thread.ts'),
          join(nitro.options.output.serverDir, 'advisory-loader.mjs'),
        ),
      )
    },
  ],
})
