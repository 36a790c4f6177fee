import { describe, expect, it } from 'vitest'
import { createPino } from '../../server/app/logger'
import { REDACT_PATHS, scrubFields } from '../../server/app/log-scrub'

/** Logs `fields` once through the service's pino set-up and returns the parsed line. */
function logged(fields: Record<string, unknown>): Record<string, unknown> {
  const lines: string[] = []
  createPino('debug', { write: (line: string) => void lines.push(line) }).info(fields, 'probe')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0]) as Record<string, unknown>
}

describe('log redaction (pino redact paths and the scrubber under them)', () => {
  it('replaces fields named like credentials, at any depth', () => {
    expect(
      logged({
        webhook: 'wh-1',
        token: 'x',
        nested: { Authorization: 'y', credentials: { password: 'z' } },
        list: [{ secret: 's' }],
        deep: { a: { b: { c: { apiKey: 'k' } } } },
      }),
    ).toMatchObject({
      webhook: 'wh-1',
      token: '[REDACTED]',
      nested: { Authorization: '[REDACTED]', credentials: '[REDACTED]' },
      list: [{ secret: '[REDACTED]' }],
      deep: { a: { b: { c: { apiKey: '[REDACTED]' } } } },
    })
  })

  it('censors every top-level redact path, and a secret name in any other spelling', () => {
    const names = REDACT_PATHS.map((path) => path.replace(/^\["(.*)"\]$/, '$1'))
    expect(names).toEqual(expect.arrayContaining(['token', 'Authorization', 'set-cookie', 'X-NuGet-ApiKey', 'apiKey']))
    const line = logged(Object.fromEntries([...names, 'ToKeN', 'pAsSwOrD'].map((name) => [name, `value of ${name}`])))
    for (const name of [...names, 'ToKeN', 'pAsSwOrD']) expect(line[name]).toBe('[REDACTED]')
    expect(JSON.stringify(line)).not.toContain('value of')
  })

  it('masks token material, webhook secrets, bearer/basic credentials and URL user info inside text', () => {
    const line = logged({
      error:
        'fetch https://user:hunter2@registry.example/pkg failed with Bearer abc123def456ghi; token fwp_AbCdEf0123456789xyz; whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      note: 'Basic authentication required',
      nested: { reason: ['upstream said Basic dXNlcjpwYXNzMQ=='] },
    })
    expect(line.error).toBe(
      'fetch https://[REDACTED]@registry.example/pkg failed with Bearer [REDACTED]; token fwp_[REDACTED]; whsec_[REDACTED]',
    )
    expect(line.note).toBe('Basic authentication required')
    expect(line.nested).toEqual({ reason: ['upstream said Basic [REDACTED]'] })
  })

  it('leaves ordinary fields alone, without copying them', () => {
    const fields = {
      requestId: 'req-1',
      route: '/v1/{ns}/config/{fw}',
      status: 200,
      durationMs: 1.5,
      tokenIdentifier: 'tid-abc',
    }
    expect(scrubFields(fields)).toBe(fields)
    expect(logged(fields)).toMatchObject(fields)
  })

  it('keeps a logged key __proto__ a key', () => {
    const line = logged(
      JSON.parse('{"__proto__":{"token":"x","note":"Bearer abc123def456"}}') as Record<string, unknown>,
    )
    expect(Object.getOwnPropertyDescriptor(line, '__proto__')?.value).toEqual({
      token: '[REDACTED]',
      note: 'Bearer [REDACTED]',
    })
  })

  it('writes one JSON line of time, level name, message and the fields, nothing else', () => {
    const line = logged({ status: 200 })
    expect(Object.keys(line).sort()).toEqual(['level', 'msg', 'status', 'time'])
    expect(line).toMatchObject({ level: 'info', msg: 'probe', status: 200 })
    expect(new Date(line.time as string).toISOString()).toBe(line.time)
  })
})
