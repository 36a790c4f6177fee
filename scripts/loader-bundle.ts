import { build } from 'esbuild'

/**
 * Bundles the advisory loader thread (server/advisories/loader-thread.ts) into one ESM file: the
 * build puts it beside index.mjs (nitro.config.ts), the test run beside its bundled admin CLI
 * (test/support/global-bundles.ts). Its own bundle: a rollup entry would share Nitro's runtime
 * chunk, and importing that starts every plugin.
 */
export async function bundleLoaderThread(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    // CommonJS dependencies (semver) call require; an ESM bundle has none of its own.
    banner: {
      js: "import { createRequire as createRequireForCjs } from 'node:module'; const require = createRequireForCjs(import.meta.url);",
    },
  })
}
