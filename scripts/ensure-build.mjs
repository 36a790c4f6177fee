// `npm start` builds first when there is no build yet or the sources are newer than it.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { execSync } from 'node:child_process'

const output = '.output/server/index.mjs'

function newest(dir) {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

const sources = ['server', 'machines', 'storage'].filter(existsSync).map(newest)
const stale =
  !existsSync(output) || Math.max(...sources, statSync('nitro.config.ts').mtimeMs) > statSync(output).mtimeMs
if (stale) execSync('npx nitro build', { stdio: 'inherit' })
