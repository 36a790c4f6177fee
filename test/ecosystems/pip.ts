import { execFile } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Runs pip against a firewall's simple index with the token as `__token__`'s password. */
export function pip(
  registryUrl: string,
  token: string,
  args: string[],
): Promise<{ code: number; output: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'pf-pip-'))
  const index = registryUrl.replace('://', `://__token__:${encodeURIComponent(token)}@`) + 'simple/'
  const argv = [
    '-m',
    'pip',
    ...args,
    '--no-deps',
    '--no-cache-dir',
    '--disable-pip-version-check',
    '--no-input',
    '--index-url',
    index,
    '-d',
    dir,
  ]
  return new Promise((resolve) => {
    // An isolated pip: no user configuration, no proxy, nothing but the firewall.
    const env = {
      PATH: process.env.PATH!,
      HOME: mkdtempSync(join(tmpdir(), 'pf-pip-home-')),
      PIP_CONFIG_FILE: '/dev/null',
      PYTHONDONTWRITEBYTECODE: '1',
      NO_PROXY: '*',
    }
    execFile('python3', argv, { env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}\n${stderr}`, dir })
    })
  })
}
