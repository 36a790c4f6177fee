import { execFile } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * The admin CLI as a real process on fs storage: as an operator runs it (`npm run admin -- ...` is
 * `tsx scripts/admin.ts ...`) for `--help`, and from the run's bundle of the same sources
 * (test/support/global-bundles.ts) for the rest, which saves a TypeScript compile per call.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'pf-admin-cli-'))
const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64')

const AS_OPERATOR = ['--import', 'tsx', 'scripts/admin.ts']
const BUNDLED = process.env.TEST_ADMIN_CLI ? [process.env.TEST_ADMIN_CLI] : AS_OPERATOR

function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return adminAs(BUNDLED, args)
}

function adminAs(cli: string[], args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    DATA_DIR: dataDir,
    SECRETS_KEY,
    ADVISORY_FEED_URL: 'off',
  }
  return new Promise((resolve) => {
    execFile(process.execPath, [...cli, ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr })
    })
  })
}

const STACK = /\n\s+at .+\(.*:\d+:\d+\)/

describe('npm run admin', () => {
  it('--help prints usage with every command, exit 0, no stack trace', async () => {
    const { code, stdout, stderr } = await adminAs(AS_OPERATOR, ['--help'])
    expect(code).toBe(0)
    expect(stderr).toBe('')
    expect(stdout).toMatch(/^usage: npm run admin -- <command>/)
    for (const command of ['create-namespace', 'create-user', 'rotate-secrets-key', 'advisories'])
      expect(stdout).toContain(command)
    expect((await admin('help')).stdout).toBe(stdout)
    expect((await admin('-h')).stdout).toBe(stdout)
  })

  it('<command> --help prints that command with its options', async () => {
    const { code, stdout } = await admin('create-user', '--help')
    expect(code).toBe(0)
    expect(stdout).toMatch(/^usage: npm run admin -- create-user --namespace <ns> --user <id>/)
    for (const option of ['--namespace', '--user', '--json']) expect(stdout).toContain(option)
    expect((await admin('advisories', '--help')).stdout).toContain('--file')
  })

  it('an unknown option or command answers 2 with a pointer to --help, never a stack trace', async () => {
    const option = await admin('create-user', '--bogus')
    expect(option.code).toBe(2)
    expect(option.stderr).toContain("'--bogus'")
    expect(option.stderr).toContain('--help')
    expect(option.stderr).not.toMatch(STACK)
    const command = await admin('frobnicate')
    expect(command.code).toBe(2)
    expect(command.stderr).toContain('unknown command "frobnicate"')
    const missing = await admin('create-user', '--namespace', 'x')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('--user')
  })

  it('--json prints one JSON document; without it the token is alone on the last line', async () => {
    const created = await admin('create-namespace', '--namespace', 'cli', '--user', 'olga', '--json')
    expect(created.code, created.stderr).toBe(0)
    expect(JSON.parse(created.stdout)).toEqual({
      namespace: 'cli',
      user: 'olga',
      token: expect.stringMatching(/^fwp_/),
    })
    const member = await admin('create-user', '--namespace', 'cli', '--user', 'max')
    expect(member.stdout.trim().split('\n').at(-1)).toMatch(/^fwp_\S+$/)
    const duplicate = await admin('create-user', '--namespace', 'cli', '--user', 'max', '--json')
    expect(duplicate.code).toBe(1)
    expect(JSON.parse(duplicate.stderr)).toEqual({ error: expect.stringContaining('already exists') })
    expect(duplicate.stdout).toBe('')
  })

  it('--json for rotate-secrets-key and advisories status', async () => {
    const rotated = await admin('rotate-secrets-key', '--json')
    expect(rotated.code, rotated.stderr).toBe(0)
    expect(JSON.parse(rotated.stdout)).toMatchObject({
      secrets: expect.any(Number),
      records: expect.any(Number),
      keyId: expect.any(String),
    })
    const status = await admin('advisories', 'status', '--json')
    expect(status.code, status.stderr).toBe(0)
    const doc = JSON.parse(status.stdout)
    expect(doc.feed).toEqual({ on: false })
    expect(doc.ecosystems.map((e: { ecosystem: string }) => e.ecosystem)).toEqual(['npm', 'pypi', 'maven', 'nuget'])
  })
})
