import { createRequire } from 'node:module'
import pino, { type DestinationStream, type Logger } from 'pino'
import type { prettyFactory as PrettyFactory } from 'pino-pretty'
import { currentRequestId } from './request-context'
import { REDACT_PATHS, REDACTED, scrubFields } from './log-scrub'

/**
 * Structured log lines through pino: JSON lines by default (`time`, `level`, `msg`, the fields),
 * `LOG_FORMAT=pretty` for people. debug and info go to stdout, warn and error to stderr.
 * `LOG_LEVEL` is `debug`, `info` (default), `warn` or `error`. Every line written while a request
 * runs carries its `requestId`. Callers pass fields, never payloads, tokens, secrets or signatures;
 * log-scrub.ts is the net under them.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error'
const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error']

type Fields = Record<string, unknown>
type Write = (message: string, fields?: Fields) => void

/** The level `LOG_LEVEL` names; anything else is `info`. */
export function levelFromEnv(value = process.env.LOG_LEVEL): Level {
  return LEVELS.find((level) => level === value) ?? 'info'
}

/**
 * A pino logger with this service's line shape and redaction, writing to `destination`.
 * @example createPino('info', process.stdout)
 */
export function createPino(level: Level, destination: DestinationStream): Logger<never, boolean> {
  return pino(
    {
      level,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: scrubFields },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
    },
    destination,
  )
}

/** Lines held for one write at most: past it they are written at once (a burst is not held whole). */
export const LINE_BATCH_BYTES = 64 * 1024

/**
 * `stream`, with the lines of one turn of the event loop written together (#27): at the end of the
 * turn (`setImmediate`), or at once past `LINE_BATCH_BYTES`, and at the process's exit. A write is
 * a system call, dear on a virtual machine (60-140 µs measured in profiles here), and a burst of
 * deliveries logs an attempt line each. Order is kept; a line is held for less than a turn.
 */
export function batchedLines(stream: Pick<NodeJS.WritableStream, 'write'>): DestinationStream {
  let pending: string[] = []
  let bytes = 0
  let scheduled = false
  const flush = () => {
    if (pending.length === 0) return
    const text = pending.length === 1 ? pending[0] : pending.join('')
    pending = []
    bytes = 0
    stream.write(text)
  }
  const flushAtTurnEnd = () => {
    scheduled = false
    flush()
  }
  // A line logged just before an exit is written: stdout and stderr are synchronous on files and pipes.
  process.once('exit', flush)
  return {
    write(line: string) {
      pending.push(line)
      bytes += line.length
      if (bytes >= LINE_BATCH_BYTES) flush()
      else if (!scheduled) {
        scheduled = true
        setImmediate(flushAtTurnEnd)
      }
    },
  }
}

function destination(stream: NodeJS.WriteStream): DestinationStream {
  // Node's own stdout and stderr, as before pino: synchronous on files and on pipes (Linux), so a
  // line logged just before an exit is not lost. Not pino.destination(): on a pipe whose reader
  // lags it sleeps 100 ms per EAGAIN, and wrote 4,500-7,000 lines/s in bench:logger against
  // 21,000-46,000 through process.stdout (same run, 2026-11-26).
  if (process.env.LOG_FORMAT !== 'pretty') return batchedLines(stream)
  // Required here, synchronously, only for people's format: pino-pretty and its dependencies cost
  // every start about 30 ms of CPU that JSON lines never use (nitro.config.ts keeps it in the build).
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as { prettyFactory: typeof PrettyFactory }
  const prettify = prettyFactory({ singleLine: true, translateTime: "UTC:yyyy-mm-dd'T'HH:MM:ss.l'Z'" })
  return { write: (line: string) => void stream.write(prettify(line)) }
}

// Every line written while a request runs carries its id; an explicit field wins. Spread, not
// assigned: a logged key `__proto__` (from parsed JSON) stays a key.
function withRequest(fields: Fields | undefined): Fields {
  const requestId = currentRequestId()
  return requestId ? { requestId, ...fields } : (fields ?? {})
}

function build(): Record<Level, Write> {
  const level = levelFromEnv()
  const out = createPino(level, destination(process.stdout))
  const err = createPino(level, destination(process.stderr))
  const enabled = (at: Level) => LEVELS.indexOf(at) >= LEVELS.indexOf(level)
  const skip: Write = () => undefined
  return {
    debug: enabled('debug') ? (message, fields) => out.debug(withRequest(fields), message) : skip,
    info: enabled('info') ? (message, fields) => out.info(withRequest(fields), message) : skip,
    warn: enabled('warn') ? (message, fields) => err.warn(withRequest(fields), message) : skip,
    error: (message, fields) => err.error(withRequest(fields), message),
  }
}

// Built at the first line, so a LOG_LEVEL set before anything logs (tests, scripts) takes effect.
let built: Record<Level, Write> | undefined
const writer = () => (built ??= build())

export const logger: Record<Level, Write> = {
  debug: (message, fields) => writer().debug(message, fields),
  info: (message, fields) => writer().info(message, fields),
  warn: (message, fields) => writer().warn(message, fields),
  error: (message, fields) => writer().error(message, fields),
}
