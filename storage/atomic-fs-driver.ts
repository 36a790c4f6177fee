import { mkdir, rename, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import fsDriver from 'unstorage/drivers/fs'
import type { Driver } from 'unstorage'

/**
 * unstorage's fs driver, with writes made atomic (temp file + rename). The plain driver
 * truncates then writes, so a concurrent read (another request, or the admin CLI) could
 * see an empty file and take a stored token or firewall for missing. Files are written 0600
 * and directories created 0700: the data holds credentials and webhook secrets.
 */
export function atomicFsDriver(options: { base: string }): Driver {
  const base = resolve(options.base)
  const inner = fsDriver({ base, ignore: ['**/node_modules/**', '**/.git/**', '**/.tmp/**'] })
  const pathOf = (key: string) => join(base, key.replace(/:/g, '/'))
  const write = async (key: string, value: string | Uint8Array) => {
    const target = pathOf(key)
    const temp = join(base, '.tmp', `${randomBytes(8).toString('hex')}.tmp`)
    await mkdir(dirname(temp), { recursive: true, mode: 0o700 })
    await mkdir(dirname(target), { recursive: true, mode: 0o700 })
    await writeFile(temp, value, { mode: 0o600 })
    await rename(temp, target)
  }
  return {
    ...inner,
    name: 'fs-atomic',
    setItem: (key: string, value: string) => write(key, value),
    setItemRaw: (key: string, value: Uint8Array) => write(key, value),
  }
}
