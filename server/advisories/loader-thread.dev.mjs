// The loader thread when running from sources (tests, tsx scripts): the thread registers tsx,
// then loads the TypeScript module. The built server runs advisory-loader.mjs instead.
import { register } from 'tsx/esm/api'

register()
await import('./loader-thread.ts')
