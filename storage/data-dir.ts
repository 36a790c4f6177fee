import { chmodSync, mkdirSync, statSync } from 'node:fs'
import { resolve } from 'node:path'

/** What `secureDataDir` did, for the start-up log. */
interface DataDirCheck {
  path: string
  /** The mode the directory had when it was wider than 0700 (now tightened), else null. */
  tightenedFrom: number | null
  /** Why it could not be tightened (a volume owned by another user, say), else null. */
  error: string | null
}

/**
 * The fs data directory is the only guard of files the service writes 0600: it is created 0700,
 * and an existing one readable by others is tightened to 0700 (its older files stay as they are,
 * behind it, and become 0600 when next written).
 * @example secureDataDir('./.data').tightenedFrom // 0o755 on a directory made before this rule
 */
export function secureDataDir(dir: string): DataDirCheck {
  const path = resolve(dir)
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 })
    const mode = statSync(path).mode & 0o777
    if ((mode & 0o077) === 0) return { path, tightenedFrom: null, error: null }
    chmodSync(path, 0o700)
    return { path, tightenedFrom: mode, error: null }
  } catch (error) {
    return { path, tightenedFrom: null, error: (error as NodeJS.ErrnoException).code ?? String(error) }
  }
}
