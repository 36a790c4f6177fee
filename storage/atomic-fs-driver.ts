import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import fsDriver from 'unstorage/drivers/fs'
import type { Driver } from 'unstorage'
import { concurrencyLimit } from './concurrency-limit'
import { reasonOf, StorageFailure } from './storage-failure'

/**
 * File operations in flight at once, for the whole process. libuv runs file I/O on 4 threads,
 * so more buys nothing, and each open file is a descriptor the sockets also need.
 */
export const FS_CONCURRENCY = 32

/** Directories that are never keys: the temp files of atomic writes, and tooling leftovers. */
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git', '.tmp'])

const missing = (error: unknown) =>
  ['ENOENT', 'EISDIR', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')

/**
 * unstorage's fs driver, with three changes:
 * - writes are atomic (temp file + rename). The plain driver truncates then writes, so a
 *   concurrent read (another request, or the admin CLI) could see an empty file and take a
 *   stored token or firewall for missing;
 * - a failed read, listing or removal throws StorageFailure. The plain driver returns the error
 *   object (EMFILE, EACCES) as if it were the stored value, and callers read fields of it;
 * - every file operation waits its turn under FS_CONCURRENCY, so reading many keys at once
 *   cannot exhaust file descriptors.
 * Files are written 0600 and directories created 0700: the data holds credentials and webhook secrets.
 */
export function atomicFsDriver(options: { base: string; concurrency?: number }): Driver {
  const base = resolve(options.base)
  const inner = fsDriver({ base, ignore: ['**/node_modules/**', '**/.git/**', '**/.tmp/**'] })
  const limit = concurrencyLimit(options.concurrency ?? FS_CONCURRENCY)
  const pathOf = (key: string) => {
    if (/\.\.:|\.\.$/.test(key)) throw new StorageFailure('key', 'a key with a .. segment')
    return join(base, key.replace(/:/g, '/'))
  }
  // Temp names: this process's id and a counter (unique among live processes sharing the
  // directory, such as the admin CLI), cheaper than random bytes on every write.
  let written = 0
  const tempDir = join(base, '.tmp')
  const write = (key: string, value: string | Uint8Array) =>
    limit(async () => {
      const target = pathOf(key)
      const temp = join(tempDir, `${process.pid.toString(36)}-${(written++).toString(36)}.tmp`)
      try {
        // The directories exist for nearly every write (one per kind of key): create them only when
        // a write says they are missing, rather than two mkdir calls before each write.
        await writeFile(temp, value, { mode: 0o600 }).catch(async (error: unknown) => {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
          await mkdir(tempDir, { recursive: true, mode: 0o700 })
          await writeFile(temp, value, { mode: 0o600 })
        })
        await rename(temp, target).catch(async (error: unknown) => {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
          await mkdir(dirname(target), { recursive: true, mode: 0o700 })
          await rename(temp, target)
        })
      } catch (error) {
        await unlink(temp).catch(() => undefined)
        throw new StorageFailure('write', reasonOf(error), { cause: error })
      }
    })
  const read = (key: string, encoding?: 'utf8') =>
    limit(async () => {
      try {
        return await readFile(pathOf(key), encoding)
      } catch (error) {
        if (missing(error)) return null
        throw new StorageFailure('read', reasonOf(error), { cause: error })
      }
    })
  /** Every file below `relative`, as paths from the root; `depth`: directory levels still to enter. */
  const list = async (relative: string, depth: number | undefined): Promise<string[]> => {
    let entries
    try {
      entries = await limit(() => readdir(join(base, relative), { withFileTypes: true }))
    } catch (error) {
      if (missing(error)) return []
      throw new StorageFailure('list', reasonOf(error), { cause: error })
    }
    const nested = await Promise.all(
      entries.map(async (entry) => {
        const path = relative ? `${relative}/${entry.name}` : entry.name
        if (!entry.isDirectory()) return [path]
        if (SKIPPED_DIRECTORIES.has(entry.name) || (depth !== undefined && depth <= 0)) return []
        return list(path, depth === undefined ? undefined : depth - 1)
      }),
    )
    return nested.flat()
  }
  return {
    ...inner,
    name: 'fs-atomic',
    getItem: (key: string) => read(key, 'utf8'),
    getItemRaw: (key: string) => read(key),
    setItem: (key: string, value: string) => write(key, value),
    setItemRaw: (key: string, value: Uint8Array) => write(key, value),
    removeItem: (key: string) =>
      limit(async () => {
        try {
          await unlink(pathOf(key))
        } catch (error) {
          if (!missing(error)) throw new StorageFailure('remove', reasonOf(error), { cause: error })
        }
      }),
    // Only the directory of the prefix is walked (unstorage filters by prefix afterwards; the plain
    // driver walked the whole data directory for every listing). maxDepth counts from the root.
    getKeys: (prefix: string, options: { maxDepth?: number }) => {
      const segments = (prefix ?? '').split(':').filter(Boolean)
      if (segments.some((segment) => segment === '..' || segment === '.')) return list('', options?.maxDepth)
      const depth = options?.maxDepth === undefined ? undefined : options.maxDepth - segments.length
      if (depth !== undefined && depth < 0) return []
      return list(segments.join('/'), depth)
    },
  }
}
