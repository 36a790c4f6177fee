/**
 * Storage could not be read or written (a file the OS would not open, a Redis that does not
 * answer). Always thrown, never returned as a stored value; the HTTP edge answers 503
 * `storage_unavailable` (server/http/problem.ts). The message names the operation and the
 * system error code, never a path or a value.
 */
export class StorageFailure extends Error {
  constructor(
    readonly operation: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`storage ${operation} failed (${reason})`, options)
    this.name = 'StorageFailure'
  }
}

/** The error's system code (`EMFILE`, `EACCES`, ...) or its name. */
export function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code
  if (typeof code === 'string' && /^[A-Z0-9_]{2,32}$/.test(code)) return code
  return error instanceof Error ? error.name : 'unknown error'
}

// ioredis reports a Redis it cannot reach with these errors (not with StorageFailure): after its
// retries per command, when every cluster node failed, or on a closed connection.
const REDIS_UNREACHABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError'])
const REDIS_UNREACHABLE_MESSAGES = [
  'Connection is closed.',
  "Stream isn't writeable and enableOfflineQueue options is false",
  'None of startup nodes is available',
  'Failed to refresh slots cache.',
]

/**
 * Whether an error means storage could not be reached or read: a `StorageFailure`, or the
 * errors ioredis raises for a Redis (or a Cluster) that does not answer. The edge answers 503.
 */
export function isStorageFailure(error: unknown): boolean {
  if (error instanceof StorageFailure) return true
  if (!(error instanceof Error)) return false
  return REDIS_UNREACHABLE_NAMES.has(error.name) || REDIS_UNREACHABLE_MESSAGES.includes(error.message)
}
