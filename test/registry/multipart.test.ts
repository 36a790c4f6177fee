import { describe, expect, it } from 'vitest'
import { crlfDelimiters, formField, parseMultipart } from '../../server/registry/multipart'

const CRLF = '\r\n'
function body(boundary: string): Buffer {
  return Buffer.from(
    [
      `--${boundary}`,
      'Content-Disposition: form-data; name=":action"',
      '',
      'file_upload',
      `--${boundary}`,
      'Content-Disposition: form-data; name="content"; filename="demo-1.0.tar.gz"',
      'Content-Type: application/octet-stream',
      '',
      'BYTES\u0000\u00ff',
      `--${boundary}--`,
      '',
    ].join(CRLF),
    'latin1',
  )
}

describe('parseMultipart', () => {
  it('reads fields and files with a bare boundary (twine)', async () => {
    const parts = await parseMultipart(body('xYz'), 'multipart/form-data; boundary=xYz')
    expect(formField(parts!, ':action')).toBe('file_upload')
    const file = parts!.find((p) => p.name === 'content')!
    expect(file.filename).toBe('demo-1.0.tar.gz')
    expect(file.data.equals(Buffer.from('BYTES\u0000\u00ff', 'latin1'))).toBe(true)
  })

  it('reads a quoted boundary (dotnet nuget push)', async () => {
    const parts = await parseMultipart(body('a-b-c'), 'multipart/form-data; boundary="a-b-c"')
    expect(parts?.map((p) => p.name)).toEqual([':action', 'content'])
  })

  it('answers null for another content type, a missing boundary or a body that does not follow it', async () => {
    expect(await parseMultipart(body('xYz'), 'application/json')).toBeNull()
    expect(await parseMultipart(body('xYz'), 'multipart/form-data')).toBeNull()
    expect(await parseMultipart(Buffer.from('no parts here'), 'multipart/form-data; boundary=xYz')).toBeNull()
  })

  it('accepts LF-only lines around boundaries (the old nuget client) and leaves a conforming body as it is', async () => {
    const lf = Buffer.from(
      body('q1').toString('latin1').replaceAll('\r\n--q1', '\n--q1').replace('--q1--\r\n', '--q1--\n'),
      'latin1',
    )
    const parts = await parseMultipart(lf, 'multipart/form-data; boundary=q1')
    expect(formField(parts!, ':action')).toBe('file_upload')
    expect(parts!.find((p) => p.name === 'content')!.data.equals(Buffer.from('BYTES\u0000\u00ff', 'latin1'))).toBe(true)
    expect(crlfDelimiters(lf, 'multipart/form-data; boundary=q1').equals(body('q1'))).toBe(true)
    const conforming = body('q1')
    expect(crlfDelimiters(conforming, 'multipart/form-data; boundary="q1"')).toBe(conforming)
  })
})
