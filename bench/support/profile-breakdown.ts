/**
 * Where a service's CPU profile (a .cpuprofile from cpu-profile-hook.mjs) went, by area of the
 * webhook fan-out and the API: the share of the sampled busy time under each area's frames. Areas
 * overlap (async hooks run inside the others), so the shares do not add up to 100 %. The V8
 * profiler samples wall time while the thread is not idle: on a loaded machine, system calls
 * (socket and pipe writes) count the time the process waited for a core there.
 *   npx tsx bench/support/profile-breakdown.ts cpu-1234.cpuprofile
 * `--window FROM,TO --units N --cpu-us C` (a "profile window" line of bench:webhooks) counts only the
 * measured span and turns the shares into µs per unit of work; `--self` / `--total` add the
 * functions with the most self / inclusive time (`--top N` of them).
 * `--api --window FROM,TO --requests N --cpu-us C` (the "profile window" line of bench:api, and the CPU
 * per request it printed): where one API request went instead, each sample in exactly one area.
 * `--upsert` with the same options (bench:upsert's line): where one rule upsert went, by step of the
 * write path.
 */
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber?: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
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

/** Which samples count: those stamped inside `window` (monotonic µs, as the benches print it). */
function inWindow(profile: Profile, window: [number, number]): boolean[] {
  let at = profile.startTime
  return profile.samples.map((_, i) => {
    at += profile.timeDeltas[i]
    return at >= window[0] && at <= window[1]
  })
}

/** The profile's nodes by id, and each node's parent (the profile lists only children). */
function callTree(profile: Profile): { byId: Map<number, ProfileNode>; parent: Map<number, number> } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  return { byId, parent }
}

/**
 * "share  area" lines for `profile`, after a "busy N s sampled" line; with `perUnit` (the units of
 * work done in the window and the CPU per unit the bench measured) each share is also µs per unit.
 */
export function breakdown(
  profile: Profile,
  window: [number, number] = [0, Number.MAX_SAFE_INTEGER],
  perUnit?: { units: number; cpuUs: number },
): string[] {
  const { byId, parent } = callTree(profile)
  const sums = new Map(AREAS.map(([name]) => [name, 0]))
  const counted = inWindow(profile, window)
  let total = 0
  profile.samples.forEach((id, i) => {
    if (!counted[i]) return
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
  const us = (ms: number) => (perUnit ? `  ${((ms / total) * perUnit.cpuUs).toFixed(1).padStart(6)} µs` : '')
  return [
    `busy ${(total / 1000).toFixed(1)} s sampled${perUnit ? `, ${((total * 1000) / perUnit.units).toFixed(1)} µs per unit sampled` : ''}`,
    ...[...sums].map(([name, ms]) => `${((ms / total) * 100).toFixed(1).padStart(5)} %${us(ms)}  ${name}`),
  ]
}

/**
 * The functions (`self`) or the functions with their callees (`total`) taking the most of the
 * sampled busy time in `window`, as "share  function  file:line" lines: what the areas do not name.
 */
export function topFunctions(
  profile: Profile,
  window: [number, number],
  mode: 'self' | 'total',
  count = 40,
  perUnit?: { units: number; cpuUs: number },
): string[] {
  const { byId, parent } = callTree(profile)
  const counted = inWindow(profile, window)
  const name = (frame: ProfileNode['callFrame']) =>
    `${frame.functionName || '(anonymous)'}  ${frame.url ? `${frame.url.split('/').slice(-2).join('/')}:${(frame.lineNumber ?? 0) + 1}` : ''}`
  const sums = new Map<string, number>()
  let total = 0
  profile.samples.forEach((id, i) => {
    if (!counted[i]) return
    const leaf = byId.get(id)!.callFrame.functionName
    if (leaf === '(idle)' || leaf === '(program)') return
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000
    total += ms
    if (mode === 'self') {
      const key = name(byId.get(id)!.callFrame)
      sums.set(key, (sums.get(key) ?? 0) + ms)
      return
    }
    // Each function once per sample, however deep it recurses.
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) seen.add(name(byId.get(at)!.callFrame))
    for (const key of seen) sums.set(key, (sums.get(key) ?? 0) + ms)
  })
  const us = (ms: number) => (perUnit ? `  ${((ms / total) * perUnit.cpuUs).toFixed(1).padStart(6)} µs` : '')
  return [...sums]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, ms]) => `${((ms / total) * 100).toFixed(1).padStart(5)} %${us(ms)}  ${key}`)
}

/**
 * The areas of one API request (issue #27), in the order a sample is attributed: walking from the
 * sampled function towards the root, the first frame that matches any area takes the sample, so
 * the areas add up to the busy time (a Redis call made by authentication counts as storage).
 */
const API_AREAS: [string, (frame: ProfileNode['callFrame']) => boolean][] = [
  ['garbage collector', (f) => f.functionName === '(garbage collector)'],
  [
    'async context (promise hooks of AsyncLocalStorage)',
    (f) =>
      /^(promiseInitHook|promiseBeforeHook|promiseAfterHook|promiseResolveHook|emitInitScript|emitInitNative|lookupPublicResource|trackPromise|_propagate|createTask)$/.test(
        f.functionName,
      ),
  ],
  [
    'storage round trips (client, driver, Redis socket)',
    (f) =>
      f.url.includes('/ioredis/') ||
      /^(getItem|getItems|setItem|getMany|asyncCall|readFile|executeAutoPipeline|execPipeline|sendCommand)$/.test(
        f.functionName,
      ),
  ],
  ['audit and event appends', (f) => /^(auditCall|recordAudit|auditRefusal|appendEvent|append)$/.test(f.functionName)],
  [
    'logging (access line, pino)',
    (f) => f.url.includes('/pino') || /^(info|warn|debug|withRequest|scrubFields)$/.test(f.functionName),
  ],
  ['metrics (prom-client sample)', (f) => f.url.includes('/prom-client/') || f.functionName === 'observeHttpRequest'],
  [
    'authentication (token hash, lookup, principal)',
    (f) =>
      /^(authenticateCaller|authenticate|credentialFromHeader|hashToken|tokenIdentifier|findForNamespace|userAccess|checkAuthFailureLimit)$/.test(
        f.functionName,
      ),
  ],
  ['rate limit', (f) => /^(enforceTokenRateLimit|checkRateLimit)$/.test(f.functionName)],
  [
    'permissions (access check, permission sets)',
    (f) =>
      /^(requireAny|firewallPermissions|canOnFirewall|requireFirewallPermission|requireNamespacePermission|noteCheckedFirewall|takeCheckedFirewall)$/.test(
        f.functionName,
      ),
  ],
  [
    'validation (path, query, body, zod)',
    (f) =>
      f.url.includes('/zod/') ||
      /^(pathParams|parseOr400|resultOr400|readJsonBody|emptyBody|objectBody)$/.test(f.functionName),
  ],
  [
    'serialisation (JSON of the answer, cached bodies)',
    (f) =>
      /^(sendJson|sendSerialized|sendProblem|stringify|jsonOf|listFirewallsBody|getFirewallJson|etagOf)$/.test(
        f.functionName,
      ),
  ],
  [
    'response write (headers, socket write)',
    (f) =>
      /^(writev|writevGeneric|writeGeneric|writeUtf8String|writeBuffer|_storeHeader|end|writeHead)$/.test(
        f.functionName,
      ),
  ],
  // Not runWithRequestContext: every frame a request runs in the same turn is below it (the API's
  // whole handler since the direct dispatch), so it would take their samples too.
  [
    'request context and edge (ids, client address, in-flight count)',
    (f) =>
      /^(openRequest|newId|randomHex8|clientAddress|viewOf|trustProxyFromEnv|requestStarted|trackRequest|watchClientAbort)$/.test(
        f.functionName,
      ),
  ],
]
const OTHER = 'HTTP server and framework (node:http, h3 router, nitro hooks)'

const named = (pattern: RegExp) => (f: ProfileNode['callFrame']) => pattern.test(f.functionName)

/**
 * The steps of one rule upsert (bench/upsert.bench.ts). A sample goes to the first area in this
 * order that has a frame anywhere in its stack (not the one nearest the sampled frame, as for
 * `API_AREAS`): a socket write under the Redis client is the Redis client's, not the response's.
 */
const UPSERT_AREAS: [string, (frame: ProfileNode['callFrame']) => boolean][] = [
  API_AREAS[0],
  API_AREAS[1],
  [
    'Redis client and socket (commands out, replies in)',
    (f) => f.url.includes('/ioredis/') || /^(executeAutoPipeline|execPipeline|sendCommand)$/.test(f.functionName),
  ],
  [
    'stored JSON parsed (documents, index, license sets)',
    named(/^(parseStoredJson|readStoredText|parseAll|parseJsonCooperatively|destr)$/),
  ],
  [
    'transaction values serialised (document, history, events)',
    named(/^(compareAndSetCall|watchedKey|storedTextOf|check)$/),
  ],
  [
    'validateFirewall (limits, references, endpoints)',
    named(
      /^(validateFirewall|refuseOverLimits|refuseUnknownReferences|judgedRules|refuseRefusedEndpoints|patternLimitProblems|refuseDeepSelector|validateRuleForEcosystem|collectLicenseSetIds)$/,
    ),
  ],
  ['validation context (license sets, firewall list)', named(/^(firewallValidationContext|list|load|all)$/)],
  [
    'diff and permission checks of the change',
    named(
      /^(summarizeChange|diffById|equalInSlices|permissionsForChange|touchesCredentials|grantsAddedInSlices|requireMayGrant|requireFirewallPermission|isDeepStrictEqual)$/,
    ),
  ],
  ['secrets (seal, open)', named(/^(mapFirewallSecrets|mapUpstream|seal|open)$/)],
  [
    'audit entry and events (built, appended)',
    named(/^(auditCall|recordAudit|appendAudit|eventFor|makeEvent|redactFirewall|compact)$/),
  ],
  API_AREAS[4],
  API_AREAS[5],
  API_AREAS[6],
  ['access check (firewall permission)', named(/^(requireAny|firewallPermissions|canOnFirewall|noteCheckedFirewall)$/)],
  [
    'body and schema (read, JSON, zod)',
    (f) =>
      f.url.includes('/zod/') || /^(pathParams|parseOr400|resultOr400|readJsonBody|objectBody)$/.test(f.functionName),
  ],
  ['answer serialised (sendJson)', named(/^(sendJson|stringifyCooperatively|etagOf|written)$/)],
  [
    'the rest of the write (transact, mutate, the edit, firewall reads)',
    named(/^(transact|mutate|editFirewall|upsertMember|evalScript|readWatched|stampOf|through)$/),
  ],
  API_AREAS[11],
  API_AREAS[12],
]

/**
 * One API request's time by area over the samples of `window` (monotonic µs, as bench:api prints
 * it): share of the busy time and, given the measured CPU per request, µs per request.
 */
export function apiBreakdown(
  profile: Profile,
  window: [number, number],
  requests: number,
  cpuUs?: number,
  areas = API_AREAS,
  byPriority = false,
): string[] {
  const { byId, parent } = callTree(profile)
  const sums = new Map<string, number>([...areas.map(([name]) => [name, 0] as [string, number]), [OTHER, 0]])
  const attributed = new Map<number, string>()
  const areaOf = (id: number): string => {
    let area = attributed.get(id)
    if (area !== undefined) return area
    area = OTHER
    if (byPriority) {
      const frames: ProfileNode['callFrame'][] = []
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(byId.get(at)!.callFrame)
      area = areas.find(([, test]) => frames.some(test))?.[0] ?? OTHER
    } else
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at)!.callFrame
        const found = areas.find(([, test]) => test(frame))
        if (found) {
          area = found[0]
          break
        }
      }
    attributed.set(id, area)
    return area
  }
  let total = 0
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i]
    if (at < window[0] || at > window[1]) return
    const leaf = byId.get(id)!.callFrame.functionName
    if (leaf === '(idle)' || leaf === '(program)') return
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000
    total += ms
    const area = areaOf(id)
    sums.set(area, sums.get(area)! + ms)
  })
  const perRequest = (ms: number) =>
    cpuUs === undefined ? '' : `  ${((ms / total) * cpuUs).toFixed(1).padStart(6)} µs`
  return [
    `busy ${(total / 1000).toFixed(1)} s sampled, ${((total * 1000) / requests).toFixed(1)} µs per request sampled`,
    ...[...sums]
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${((ms / total) * 100).toFixed(1).padStart(5)} %${perRequest(ms)}  ${name}`),
  ]
}

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name)
  return at < 0 ? undefined : process.argv[at + 1]
}

const file = process.argv[2]
if (file) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const [from, to] = (option('--window') ?? `0,${Number.MAX_SAFE_INTEGER}`).split(',').map(Number)
  const cpu = option('--cpu-us')
  if (process.argv.includes('--api') || process.argv.includes('--upsert')) {
    const upsert = process.argv.includes('--upsert')
    const areas = upsert ? UPSERT_AREAS : API_AREAS
    const requests = Number(option('--requests') ?? 1)
    console.log(apiBreakdown(profile, [from, to], requests, cpu ? Number(cpu) : undefined, areas, upsert).join('\n'))
  } else {
    const perUnit = cpu && option('--units') ? { units: Number(option('--units')), cpuUs: Number(cpu) } : undefined
    console.log(breakdown(profile, [from, to], perUnit).join('\n'))
    for (const mode of ['self', 'total'] as const)
      if (process.argv.includes(`--${mode}`))
        console.log(
          `\nby ${mode} time:\n${topFunctions(profile, [from, to], mode, Number(option('--top') ?? 40), perUnit).join('\n')}`,
        )
  }
}
