import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './server'

/**
 * A static PEP 503 index, the way people host one: files in a directory served by
 * `python3 -m http.server` (`simple/index.html`, `simple/{project}/index.html` with relative
 * links and `#sha256=` fragments, distributions under `packages/`).
 */
export interface StaticPypi {
  /** `http://127.0.0.1:{port}/` */
  url: string
  dir: string
  close(): Promise<void>
}

const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-')

export async function startStaticPypi(
  files: { project: string; filename: string; bytes: Buffer }[],
): Promise<StaticPypi> {
  const dir = mkdtempSync(join(tmpdir(), 'pf-static-pypi-'))
  mkdirSync(join(dir, 'packages'))
  const projects = new Map<string, typeof files>()
  for (const file of files) {
    writeFileSync(join(dir, 'packages', file.filename), file.bytes)
    const name = normalize(file.project)
    projects.set(name, [...(projects.get(name) ?? []), file])
  }
  mkdirSync(join(dir, 'simple'))
  writeFileSync(
    join(dir, 'simple', 'index.html'),
    `<!DOCTYPE html><html><body>\n${[...projects.keys()].map((p) => `<a href="${p}/">${p}</a>`).join('\n')}\n</body></html>\n`,
  )
  for (const [name, own] of projects) {
    mkdirSync(join(dir, 'simple', name))
    const links = own.map(
      (f) =>
        `<a href="../../packages/${f.filename}#sha256=${createHash('sha256').update(f.bytes).digest('hex')}">${f.filename}</a>`,
    )
    writeFileSync(
      join(dir, 'simple', name, 'index.html'),
      `<!DOCTYPE html><html><body>\n${links.join('\n')}\n</body></html>\n`,
    )
  }
  const port = await freePort()
  const child: ChildProcess = spawn(
    'python3',
    ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dir],
    { stdio: 'ignore' },
  )
  const url = `http://127.0.0.1:${port}/`
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`python3 -m http.server exited (${child.exitCode})`)
    try {
      if ((await fetch(`${url}simple/`)).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('python3 -m http.server did not start')
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    url,
    dir,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}
