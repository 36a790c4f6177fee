import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

/**
 * Runs `work` under the V8 CPU profiler of this thread (an inspector session, so only the span
 * of interest is sampled), writes the .cpuprofile to `path` and returns the functions with the
 * most self time, as "ms  function  file:line" lines; idle time is left out.
 * @example const { result, top } = await profiled('/tmp/refresh.cpuprofile', () => feed.sync(['npm']))
 */
export async function profiled<T>(path: string, work: () => Promise<T>): Promise<{ result: T; top: string[] }> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 100 })
  await session.post('Profiler.start')
  let profile: Profile
  let result: T
  try {
    result = await work()
  } finally {
    profile = ((await session.post('Profiler.stop')) as { profile: Profile }).profile
    session.disconnect()
  }
  writeFileSync(path, JSON.stringify(profile))
  return { result, top: summary(profile) }
}

function summary(profile: Profile): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map<string, number>()
  // timeDeltas[i] is the time before sample i: the time a sample stands for is the next delta.
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame
    if (frame.functionName === '(idle)') return
    const where = frame.url ? `${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}` : ''
    const key = `${frame.functionName || '(anonymous)'}  ${where}`
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000)
  })
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  const lines = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8)
  return [`busy ${total.toFixed(1)} ms sampled`, ...lines.map(([key, ms]) => `${ms.toFixed(1).padStart(7)} ms  ${key}`)]
}
