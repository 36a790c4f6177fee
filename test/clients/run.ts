import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** What a client printed (stdout then stderr) and whether it succeeded. */
export interface ClientRun {
  code: number
  output: string
}

/**
 * Runs a package client to completion. The environment is the test's plus `env` (only `env`
 * and PATH with `bareEnv`: vitest's and npm's variables change what some clients do); output
 * is kept whole so tests can assert the exact text a user sees.
 */
export function runClient(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; bareEnv?: boolean; timeoutMs?: number },
): Promise<ClientRun> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: options.bareEnv ? { PATH: process.env.PATH, ...options.env } : { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 180_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, output: `${stdout}\n${stderr}` })
      },
    )
  })
}

/** The client binaries installed as devDependencies. */
export const binOf = (name: string) => join(import.meta.dirname, '..', '..', 'node_modules', '.bin', name)

/**
 * A fenced code block of a documentation file: the first block of `lang` after the line that
 * contains `marker`. Tests use the documented snippets as they are, only the URL replaced.
 */
export function documentedSnippet(file: string, marker: string, lang: string): string {
  const text = readFileSync(join(import.meta.dirname, '..', '..', file), 'utf8')
  const at = text.indexOf(marker)
  if (at < 0) throw new Error(`${file} has no "${marker}"`)
  const fence = '```' + lang + '\n'
  const start = text.indexOf(fence, at)
  if (start < 0) throw new Error(`${file} has no ${lang} block after "${marker}"`)
  const end = text.indexOf('\n```', start + fence.length)
  return text.slice(start + fence.length, end + 1)
}
