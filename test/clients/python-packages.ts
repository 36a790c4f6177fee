import { createHash } from 'node:crypto'
import { zip } from '../fixtures/ecosystems/zip'

/** A wheel whose METADATA declares `Requires-Dist` (the fixtures' wheel declares none). */
export function wheelRequiring(name: string, version: string, requires: string[]): { filename: string; bytes: Buffer } {
  const dist = name.replace(/-/g, '_')
  const info = `${dist}-${version}.dist-info`
  const hash = (text: string) => createHash('sha256').update(text).digest('base64url')
  const files: Record<string, string> = {
    [`${dist}/__init__.py`]: `VERSION = ${JSON.stringify(version)}\n`,
    [`${info}/METADATA`]: `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n${requires.map((r) => `Requires-Dist: ${r}\n`).join('')}`,
    [`${info}/WHEEL`]:
      'Wheel-Version: 1.0\nGenerator: package-firewall-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
  }
  const record = Object.entries(files).map(([path, text]) => `${path},sha256=${hash(text)},${Buffer.byteLength(text)}`)
  files[`${info}/RECORD`] = [...record, `${info}/RECORD,,`].join('\n') + '\n'
  return { filename: `${dist}-${version}-py3-none-any.whl`, bytes: zip(files) }
}
