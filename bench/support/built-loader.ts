import { resolve } from 'node:path'

/**
 * The loader thread as the built server runs it (`npm run build` puts it beside index.mjs). From
 * sources every thread would start tsx and compile the loader's TypeScript first, costing far more
 * CPU per refresh than the service spends.
 */
export const BUILT_LOADER = resolve(process.env.NITRO_OUTPUT_DIR ?? '.output', 'server/advisory-loader.mjs')
