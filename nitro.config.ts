import { defineNitroConfig } from 'nitropack/config'

// The storage driver is chosen at run time (storage/index.ts), not here: Nitro's
// `storage:` option is fixed at build time.
export default defineNitroConfig({
  preset: 'node-server',
  srcDir: 'server',
  compatibilityDate: '2026-11-01',
  imports: false,
  output: { dir: process.env.NITRO_OUTPUT_DIR || '.output' },
})
