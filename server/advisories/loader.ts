import { watch, type FSWatcher } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createAdvisoryIndex } from './index-build'
import { parseOsvRecord } from './osv'
import type { Advisory, AdvisoryIndex } from './types'

/** Result of reading an advisory directory; problems are data so the caller decides how to log. */
export interface AdvisoryLoadResult {
  index: AdvisoryIndex
  files: number
  records: number
  /** Files that are not JSON and records that are not valid OSV, skipped. */
  invalid: number
  withdrawn: number
  warnings: string[]
  /** Set when the directory itself could not be read: the data is missing, not merely empty. */
  unreadable?: string
  /** Set when the directory holds more than `maxRecords` records: the read stopped there. */
  tooMany?: string
}

/**
 * Reads every `*.json` file directly inside `dir` (not sub-directories). A file holds one OSV
 * record or an array of them. Unreadable files, bad JSON and invalid records become warnings;
 * a missing or unreadable directory gives an empty index, one warning and `unreadable`. Past
 * `maxRecords` records (valid, invalid and withdrawn together) the read stops and `tooMany` says so.
 * @example const { index, warnings } = await loadAdvisoryDir(config.advisories.dir!)
 */
export async function loadAdvisoryDir(dir: string, maxRecords = Number.POSITIVE_INFINITY): Promise<AdvisoryLoadResult> {
  const warnings: string[] = []
  const advisories: Advisory[] = []
  let names: string[]
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith('.json')).sort()
  } catch (error) {
    const unreadable = `cannot read advisory directory ${dir}: ${(error as Error).message}`
    warnings.push(unreadable)
    return { index: createAdvisoryIndex([]), files: 0, records: 0, invalid: 0, withdrawn: 0, warnings, unreadable }
  }
  let files = 0
  let withdrawn = 0
  let invalid = 0
  const empty = () => ({ index: createAdvisoryIndex([]), files, records: 0, invalid, withdrawn, warnings })
  for (const name of names) {
    let content: unknown
    try {
      content = JSON.parse(await readFile(join(dir, name), 'utf8'))
    } catch (error) {
      invalid++
      warnings.push(`${name}: ${(error as Error).message}`)
      continue
    }
    files++
    const raws = Array.isArray(content) ? content : [content]
    if (advisories.length + invalid + withdrawn + raws.length > maxRecords) {
      // Nothing is indexed: the caller keeps the data it had.
      return {
        ...empty(),
        tooMany: `the advisory directory holds more than ${maxRecords} records (ADVISORY_MAX_ENTRIES)`,
      }
    }
    for (const [position, raw] of raws.entries()) {
      const result = parseOsvRecord(raw)
      if (result.kind === 'advisory') advisories.push(result.advisory)
      else if (result.kind === 'withdrawn') withdrawn++
      else {
        invalid++
        warnings.push(`${name}[${position}]: ${result.error}`)
      }
    }
  }
  return { index: createAdvisoryIndex(advisories), files, records: advisories.length, invalid, withdrawn, warnings }
}

interface WatchAdvisoryOptions {
  /** Quiet period after the last change before reloading; editors and unzip write in bursts. */
  debounceMs?: number
  /** Watcher failures (e.g. the directory was removed); the watcher is closed afterwards. */
  onError?: (error: Error) => void
  /** As `loadAdvisoryDir`'s. */
  maxRecords?: number
}

/**
 * Watches `dir` and calls `onChange` with a fresh load after `*.json` files change. Returns a
 * function that stops watching. The initial load is the caller's (`loadAdvisoryDir`).
 * @example const close = watchAdvisoryDir(dir, (result) => { current = result.index })
 */
export function watchAdvisoryDir(
  dir: string,
  onChange: (result: AdvisoryLoadResult) => void,
  options: WatchAdvisoryOptions = {},
): () => void {
  const maxRecords = options.maxRecords ?? Number.POSITIVE_INFINITY
  const debounceMs = options.debounceMs ?? 250
  let timer: NodeJS.Timeout | undefined
  let closed = false
  let watcher: FSWatcher | undefined

  const reload = async (): Promise<void> => {
    timer = undefined
    const result = await loadAdvisoryDir(dir, maxRecords)
    if (!closed) onChange(result)
  }

  const close = (): void => {
    closed = true
    if (timer) clearTimeout(timer)
    watcher?.close()
  }

  try {
    watcher = watch(dir, { persistent: false }, (_event, filename) => {
      // Some platforms omit the file name; reload then, to be safe.
      if (filename && !filename.toString().endsWith('.json')) return
      if (timer) clearTimeout(timer)
      timer = setTimeout(() => void reload(), debounceMs)
    })
    watcher.on('error', (error) => {
      options.onError?.(error)
      close()
    })
  } catch (error) {
    options.onError?.(error as Error)
    closed = true
  }
  return close
}
