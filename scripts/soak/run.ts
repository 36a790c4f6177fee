/**
 * Multi-process soak: `npm run soak -- --minutes N` (tsx scripts/soak/run.ts --minutes N).
 * Three built servers on one Redis, a randomly answering receiver, a producer of config changes
 * and npm installs, and a SIGKILL every few seconds; prints the figures and exits 1 on any violation.
 *   SERVER_ENTRY=.output-soak/server/index.mjs npm run soak -- --minutes 10
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseSoakArgs } from './args'
import { formatReport } from './report'
import { runSoak } from './soak'

async function main(): Promise<number> {
  let options
  try {
    options = parseSoakArgs(process.argv.slice(2))
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`)
    return 2
  }
  const log = options.verbose
    ? (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
    : () => undefined
  const result = await runSoak(options, log)
  const report = formatReport(result)
  process.stdout.write(report + '\n')
  writeFileSync(join(result.runDir, 'report.txt'), report + '\n')
  writeFileSync(
    join(result.runDir, 'result.json'),
    JSON.stringify(
      {
        ...result,
        hooks: result.hooks.map((h) => ({
          ...h,
          missing: h.missing.slice(0, 50),
          unexpected: h.unexpected.slice(0, 50),
        })),
      },
      null,
      2,
    ),
  )
  return result.violations.length === 0 ? 0 : 1
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`soak failed to run: ${(error as Error).stack ?? error}\n`)
    process.exit(2)
  },
)
