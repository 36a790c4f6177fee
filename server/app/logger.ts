import { currentRequestId } from './request-context'
import { scrubFields } from './log-scrub'

/**
 * Structured log lines (JSON by default, `LOG_FORMAT=pretty` for people). Callers pass
 * fields, never payloads, tokens, secrets or signatures.
 */
type Level = 'debug' | 'info' | 'warn' | 'error'
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 }

function write(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  const threshold = ORDER[(process.env.LOG_LEVEL as Level) || 'info'] ?? ORDER.info
  if (ORDER[level] < threshold) return
  // Every line written while a request runs carries its id; an explicit field wins.
  const requestId = currentRequestId()
  fields = scrubFields(requestId ? { requestId, ...fields } : fields) as Record<string, unknown>
  const line =
    process.env.LOG_FORMAT === 'pretty'
      ? `${new Date().toISOString()} ${level.toUpperCase()} ${message} ${Object.entries(fields)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ')}`
      : JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields })
  ;(level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(line + '\n')
}

export const logger = {
  debug: (message: string, fields?: Record<string, unknown>) => write('debug', message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write('info', message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write('warn', message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write('error', message, fields),
}
