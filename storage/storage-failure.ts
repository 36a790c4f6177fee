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
