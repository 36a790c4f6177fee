#!/usr/bin/env node
/**
 * Runs each argument as a shell command, all at once, and fails if any of them fails. Each
 * command's output (stdout and stderr, interleaved as written) is printed whole when it ends,
 * under a line naming it, so outputs never mix.
 *
 * Why: `npm test` ran tsc, ESLint, madge, Prettier and the Nitro build one after another, each
 * mostly on one core. Measured in CPU seconds (a busy machine): tsc 42, ESLint 83, madge 12,
 * Prettier 39, build 24; all five side by side 208, so nothing is lost to running them together.
 * On two cores their wall time falls to about half the sum, bounded below by ESLint alone.
 *
 *   node scripts/run-parallel.mjs "tsc --noEmit" "npm run lint" "nitro build"
 */
import { Buffer } from 'node:buffer'
import { spawn } from 'node:child_process'

const commands = process.argv.slice(2)
if (commands.length === 0) {
  console.error('usage: node scripts/run-parallel.mjs "<command>" ["<command>" ...]')
  process.exit(2)
}

const started = Date.now()

/** Runs `command` through the shell; resolves with its exit code (1 for a signal) and output. */
function run(command) {
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] })
    const chunks = []
    child.stdout.on('data', (chunk) => chunks.push(chunk))
    child.stderr.on('data', (chunk) => chunks.push(chunk))
    child.once('error', (error) => chunks.push(Buffer.from(`${error.message}\n`)))
    child.once('close', (code) => resolve({ command, code: code ?? 1, output: Buffer.concat(chunks).toString() }))
  })
}

const results = await Promise.all(
  commands.map((command) =>
    run(command).then((result) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1)
      const verdict = result.code === 0 ? 'ok' : `FAILED (exit ${result.code})`
      process.stdout.write(`\n> ${command}: ${verdict} after ${seconds} s\n${result.output}`)
      return result
    }),
  ),
)

const failed = results.filter((result) => result.code !== 0)
if (failed.length > 0) {
  console.error(`\nFailed: ${failed.map((result) => result.command).join(', ')}`)
  process.exit(1)
}
