/**
 * Where a service's CPU profile (a .cpuprofile from cpu-profile-hook.mjs) went, by area of the
 * webhook fan-out and the API: the share of the sampled busy time under each area's frames. Areas
 * overlap (async hooks run inside the others), so the shares do not add up to 100 %. The V8
 * profiler samples wall time while the thread is not idle: on a loaded machine, system calls
 * (socket and pipe writes) count the time the process waited for a core there.
 *   npx tsx bench/support/profile-breakdown.ts cpu-1234.cpuprofile
 */
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const ROUTE = '(route file)'
const AREAS: [string, RegExp][] = [
  [
    'event JSON for delivery (deliveredEvent, stringify)',
    /^(deliveredEvent|deliveredEventBytes|remembered|stringifyCooperatively)$/,
  ],
  ['Redis transactions (transact: build, hash, eval)', /^transact$/],
  [
    'Redis socket writes/reads (pipeline flush, parser)',
    /^(executeAutoPipeline|execPipeline|DataHandler|returnReply)$/,
  ],
  ['HTTP attempts (sendAttempt + socket write of the body)', /^(sendAttempt|onConnect)$/],
  ['signing (HMAC of the body)', /^signatureHeader$/],
  ['logging (pino lines, stdout)', /^(info|warn|debug)$/],
  ['delivery machine (xstate macrostep)', /^macrostep$/],
  ['log follower (read + hand-out to feeds)', /^(drain|handOut)$/],
  ['live registry publish', /^publish$/],
  ['API request handlers (route files)', /^\(route file\)$/],
  ['garbage collector', /^\(garbage collector\)$/],
  [
    'async hooks (promise init/before/after)',
    /^(promiseInitHook|promiseBeforeHook|promiseAfterHook|emitInitScript|lookupPublicResource|trackPromise)$/,
  ],
]

/** "share  area" lines for `profile`, after a "busy N s sampled" line. */
export function breakdown(profile: Profile): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const sums = new Map(AREAS.map(([name]) => [name, 0]))
  let total = 0
  profile.samples.forEach((id, i) => {
    const leaf = byId.get(id)!.callFrame.functionName
    if (leaf === '(idle)' || leaf === '(program)') return
    // timeDeltas[i] is the time before sample i: the time a sample stands for is the next delta.
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000
    total += ms
    const names: string[] = []
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame
      names.push(frame.url.includes('/routes/') || frame.url.includes('v1/_') ? ROUTE : frame.functionName)
    }
    for (const [name, pattern] of AREAS)
      if (names.some((frame) => pattern.test(frame))) sums.set(name, sums.get(name)! + ms)
  })
  return [
    `busy ${(total / 1000).toFixed(1)} s sampled`,
    ...[...sums].map(([name, ms]) => `${((ms / total) * 100).toFixed(1).padStart(5)} %  ${name}`),
  ]
}

if (process.argv[2]) console.log(breakdown(JSON.parse(readFileSync(process.argv[2], 'utf8')) as Profile).join('\n'))
