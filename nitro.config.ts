import { defineNitroConfig } from 'nitropack/config'

// The storage driver is chosen at run time (storage/index.ts), not here: Nitro's
// `storage:` option is fixed at build time.
export default defineNitroConfig({
  preset: 'node-server',
  srcDir: 'server',
  compatibilityDate: '2026-11-01',
  imports: false,
  // API operations live in server/operations (an operation table), not Nitro's file-based api/ dir.
  apiDir: 'nitro-api-unused',
  output: { dir: process.env.NITRO_OUTPUT_DIR || '.output' },
})
