import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadAdvisoryDir, watchAdvisoryDir, type AdvisoryLoadResult } from '../../server/advisories/loader'
import { osvRecord } from './fixtures'

let dir: string
const closers: (() => void)[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'advisories-'))
})

afterEach(async () => {
  closers.splice(0).forEach((close) => close())
  await rm(dir, { recursive: true, force: true })
})

describe('loadAdvisoryDir', () => {
  it('indexes a file holding one record', async () => {
    await writeFile(join(dir, 'one.json'), JSON.stringify(osvRecord('GHSA-1', 'a')))
    const result = await loadAdvisoryDir(dir)
    expect(result.index.lookup('npm', 'a', '1.0.0').vulnerabilities.map((a) => a.id)).toEqual(['GHSA-1'])
  })

  it('indexes a file holding an array of records', async () => {
    await writeFile(join(dir, 'many.json'), JSON.stringify([osvRecord('GHSA-1', 'a'), osvRecord('MAL-1', 'a')]))
    expect((await loadAdvisoryDir(dir)).records).toBe(2)
  })

  it('ignores files that are not .json', async () => {
    await writeFile(join(dir, 'notes.txt'), 'hello')
    expect((await loadAdvisoryDir(dir)).files).toBe(0)
  })

  it('reports bad JSON as a warning and keeps the other files', async () => {
    await writeFile(join(dir, 'bad.json'), '{ nope')
    await writeFile(join(dir, 'good.json'), JSON.stringify(osvRecord('GHSA-1', 'a')))
    const result = await loadAdvisoryDir(dir)
    expect([result.records, result.warnings.length, result.warnings[0].startsWith('bad.json')]).toEqual([1, 1, true])
  })

  it('reports an invalid record as a warning naming its position', async () => {
    await writeFile(join(dir, 'mixed.json'), JSON.stringify([osvRecord('GHSA-1', 'a'), { summary: 'no id' }]))
    expect((await loadAdvisoryDir(dir)).warnings[0]).toMatch(/^mixed\.json\[1\]/)
  })

  it('counts withdrawn records without indexing them', async () => {
    await writeFile(
      join(dir, 'w.json'),
      JSON.stringify(osvRecord('GHSA-1', 'a', { withdrawn: '2024-01-01T00:00:00Z' })),
    )
    const result = await loadAdvisoryDir(dir)
    expect([result.withdrawn, result.index.size]).toEqual([1, 0])
  })

  it('returns an empty index with a warning for a missing directory', async () => {
    const result = await loadAdvisoryDir(join(dir, 'missing'))
    expect([result.index.size, result.warnings.length]).toEqual([0, 1])
  })
})

describe('watchAdvisoryDir', () => {
  it('reloads after a file is added', async () => {
    const reloaded = new Promise<AdvisoryLoadResult>((resolve) => {
      closers.push(watchAdvisoryDir(dir, resolve, { debounceMs: 20 }))
    })
    await writeFile(join(dir, 'new.json'), JSON.stringify(osvRecord('MAL-7', 'evil')))
    const result = await reloaded
    expect(result.index.lookup('npm', 'evil', '1.0.0').malware.map((a) => a.id)).toEqual(['MAL-7'])
  })

  it('reloads once for a burst of writes', async () => {
    const results: AdvisoryLoadResult[] = []
    const settled = new Promise<void>((resolve) => {
      closers.push(
        watchAdvisoryDir(
          dir,
          (result) => {
            results.push(result)
            if (result.records === 3) resolve()
          },
          { debounceMs: 100 },
        ),
      )
    })
    await Promise.all(
      ['a', 'b', 'c'].map((n) => writeFile(join(dir, `${n}.json`), JSON.stringify(osvRecord(`GHSA-${n}`, n)))),
    )
    await settled
    expect(results.length).toBe(1)
  })

  it('does not call back after close', async () => {
    let calls = 0
    const close = watchAdvisoryDir(dir, () => calls++, { debounceMs: 10 })
    close()
    // A second watcher with a longer debounce proves the change was seen and waited out.
    const observed = new Promise<AdvisoryLoadResult>((resolve) => {
      closers.push(watchAdvisoryDir(dir, resolve, { debounceMs: 50 }))
    })
    await writeFile(join(dir, 'late.json'), JSON.stringify(osvRecord('GHSA-9', 'x')))
    await observed
    expect(calls).toBe(0)
  })

  it('reports a missing directory through onError', () => {
    const errors: Error[] = []
    closers.push(watchAdvisoryDir(join(dir, 'missing'), () => {}, { onError: (e) => errors.push(e) }))
    expect(errors.length).toBe(1)
  })
})
