import { waitFor } from '../support/wait-for'
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAdvisorySource, type AdvisorySource } from '../../server/advisories/directory-source'
import { RegistryError } from '../../server/registry/responses'
import { osvRecord } from '../firewall/fixtures'

/** ADVISORY_DIR that cannot be read is unavailable data (rules that need it fail closed), not "no advisories". */

let root: string
let source: AdvisorySource | undefined

afterEach(async () => {
  source?.close()
  await rm(root, { recursive: true, force: true })
})

const until = (check: () => boolean, what: string) => waitFor(check, 5_000, what, 20)

const lookupError = (s: AdvisorySource) => {
  try {
    s.current().lookup('npm', 'a', '1.0.0')
    return null
  } catch (error) {
    return error
  }
}

describe('advisory source', () => {
  it('answers 503 on lookup while the directory cannot be read, then serves the data once it appears', async () => {
    root = await mkdtemp(join(tmpdir(), 'adv-src-'))
    const dir = join(root, 'osv')
    source = createAdvisorySource(dir, { retryMs: 30 })
    await source.ready
    const error = lookupError(source)
    expect(error).toBeInstanceOf(RegistryError)
    expect((error as RegistryError).status).toBe(503)
    expect((error as RegistryError).headers['retry-after']).toBeDefined()
    expect((error as RegistryError).message).toContain('advisory data')

    // The directory appears with its file in one step (a rename): a retry between a mkdir and the
    // write would read an empty directory, which is data (no advisories), and stop retrying.
    const staging = join(root, 'staging')
    await mkdir(staging)
    await writeFile(join(staging, 'one.json'), JSON.stringify(osvRecord('GHSA-1', 'a')))
    await rename(staging, dir)
    await until(() => lookupError(source!) === null, 'the retry to load the directory')
    expect(
      source
        .current()
        .lookup('npm', 'a', '1.0.0')
        .vulnerabilities.map((a) => a.id),
    ).toEqual(['GHSA-1'])
  })

  it('treats an empty but readable directory as data: no advisories, no refusal', async () => {
    root = await mkdtemp(join(tmpdir(), 'adv-src-'))
    source = createAdvisorySource(root)
    await source.ready
    expect(source.current().lookup('npm', 'a', '1.0.0')).toEqual({ vulnerabilities: [], malware: [] })
  })

  it('needs no directory when ADVISORY_DIR is unset', async () => {
    root = await mkdtemp(join(tmpdir(), 'adv-src-'))
    source = createAdvisorySource(undefined)
    await source.ready
    expect(source.current().size).toBe(0)
    expect(lookupError(source)).toBeNull()
  })
})
