import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const app = resolve('server/app')

// A process that logs at each level, inside and outside a request, as the server does.
const SCRIPT = `
const { logger } = await import(${JSON.stringify(`${app}/logger.ts`)})
const { runWithRequestContext } = await import(${JSON.stringify(`${app}/request-context.ts`)})
logger.debug('at debug', { n: 1 })
logger.info('at info', { n: 2 })
logger.warn('at warn', { n: 3 })
logger.error('at error', { n: 4 })
runWithRequestContext({ requestId: 'req-in' }, () => logger.info('inside a request'))
runWithRequestContext({ requestId: 'req-in' }, () => logger.info('explicit id', { requestId: 'req-mine' }))
runWithRequestContext({ requestId: 'req-over', ended: true }, () => logger.info('after the response closed'))
`

/** Runs SCRIPT with `env` and returns the JSON lines of its stdout and stderr. */
async function logsWith(env: Record<string, string>) {
  const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    env: { PATH: process.env.PATH ?? '', ...env },
  })
  const parse = (text: string) =>
    text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  return { out: parse(stdout), err: parse(stderr) }
}

describe('logger (a real process, its stdout and stderr)', () => {
  it('writes debug and info to stdout, warn and error to stderr, at LOG_LEVEL=debug', async () => {
    const { out, err } = await logsWith({ LOG_LEVEL: 'debug' })
    expect(out.map((line) => [line.level, line.msg])).toEqual([
      ['debug', 'at debug'],
      ['info', 'at info'],
      ['info', 'inside a request'],
      ['info', 'explicit id'],
      ['info', 'after the response closed'],
    ])
    expect(err.map((line) => [line.level, line.msg])).toEqual([
      ['warn', 'at warn'],
      ['error', 'at error'],
    ])
  })

  it('puts the request id on lines written inside a request, an explicit one winning, none once it ended', async () => {
    const { out } = await logsWith({})
    const byMessage = new Map(out.map((line) => [line.msg, line]))
    expect(byMessage.get('inside a request')?.requestId).toBe('req-in')
    expect(byMessage.get('explicit id')?.requestId).toBe('req-mine')
    expect(byMessage.get('after the response closed')).not.toHaveProperty('requestId')
    expect(byMessage.get('at info')).not.toHaveProperty('requestId')
  })

  it('drops lines under LOG_LEVEL, and reads an unknown or missing value as info', async () => {
    const envs: Record<string, string>[] = [
      { LOG_LEVEL: 'warn' },
      { LOG_LEVEL: 'error' },
      {},
      { LOG_LEVEL: 'verbose' },
      { LOG_LEVEL: 'trace' },
    ]
    const [warn, error, ...asInfo] = await Promise.all(envs.map((env) => logsWith(env)))
    expect(warn.out).toEqual([])
    expect(warn.err.map((line) => line.level)).toEqual(['warn', 'error'])
    expect(error.out).toEqual([])
    expect(error.err.map((line) => line.level)).toEqual(['error'])
    for (const { out } of asInfo) {
      expect(out.map((line) => line.msg)).not.toContain('at debug')
      expect(out.map((line) => line.msg)).toContain('at info')
    }
  })

  it('writes readable lines with LOG_FORMAT=pretty', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
      env: { PATH: process.env.PATH ?? '', LOG_FORMAT: 'pretty', NO_COLOR: '1' },
    })
    expect(stdout).toMatch(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] INFO: at info \{"n":2\}$/m)
    expect(stdout).toMatch(/INFO: inside a request \{"requestId":"req-in"\}/)
  })
})

describe('log lines written together (#27: a write per line was a system call each)', () => {
  it('writes the lines of one turn in one write, in order, and a held burst at LINE_BATCH_BYTES', async () => {
    const { batchedLines, LINE_BATCH_BYTES } = await import('../../server/app/logger')
    const writes: string[] = []
    const stream = batchedLines({ write: (text: string) => writes.push(text) > 0 })
    for (let i = 0; i < 100; i++) stream.write(`{"n":${i}}\n`)
    expect(writes).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(writes).toHaveLength(1)
    expect(
      writes[0]
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).n),
    ).toEqual(Array.from({ length: 100 }, (_, i) => i))
    // A burst larger than the limit is not held whole: written as it reaches it.
    const line = `${'x'.repeat(1023)}\n`
    for (let i = 0; i < (2 * LINE_BATCH_BYTES) / line.length; i++) stream.write(line)
    expect(writes).toHaveLength(3)
    await new Promise((resolve) => setImmediate(resolve))
    expect(writes.slice(1).join('')).toBe(line.repeat((2 * LINE_BATCH_BYTES) / line.length))
  })

  it('writes a line logged just before the process exits', async () => {
    const script = `
const { logger } = await import(${JSON.stringify(`${app}/logger.ts`)})
logger.info('last words', { n: 1 })
logger.error('last error', { n: 2 })
process.exit(3)
`
    const exited = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '' },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error)
    expect('code' in exited ? exited.code : 0).toBe(3)
    expect(JSON.parse(exited.stdout).msg).toBe('last words')
    expect(JSON.parse(exited.stderr).msg).toBe('last error')
  })
})
