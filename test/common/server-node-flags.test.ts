import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { SERVER_NODE_FLAGS } from '../../scripts/server-node-flags'
import { SERVER_ENTRY, startServer } from '../support/server'

/** The flags between `node` and the built entry in a command line (`node <flags...> .output/server/index.mjs`). */
function flagsOf(words: string[]): string[] {
  expect(words[0]).toBe('node')
  expect(words.at(-1)).toBe('.output/server/index.mjs')
  return words.slice(1, -1)
}

// Tests, benches and the soak spawn the built server with SERVER_NODE_FLAGS: they measure what
// `npm start` and the image run only while all three name the same flags.
describe('the Node flags of the service', () => {
  it('npm start passes exactly the flags the tests and benches spawn the server with', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
    expect(flagsOf(pkg.scripts.start.split(/\s+/))).toEqual(SERVER_NODE_FLAGS)
  })

  it('the image runs the server with the same flags', () => {
    const cmd = readFileSync('Dockerfile', 'utf8').match(/^CMD (\[.*\])$/m)
    expect(cmd).not.toBeNull()
    expect(flagsOf(JSON.parse(cmd![1]) as string[])).toEqual(SERVER_NODE_FLAGS)
  })

  it('the tests and benches start the built server with them', async () => {
    const server = await startServer()
    try {
      const args = readFileSync(`/proc/${server.process.pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
      expect(args.slice(1, -1)).toEqual(SERVER_NODE_FLAGS)
      expect(args.at(-1)).toBe(SERVER_ENTRY)
    } finally {
      await server.stop()
    }
  })
})
