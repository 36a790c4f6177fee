import { nuspecOf } from '../../server/registry/nuget/nupkg'
import { bodyOf, send, startLoopback, type Loopback } from './loopback'

interface Version {
  id: string
  version: string
  nupkg: Buffer
  published: string
  listed: boolean
  license?: string
}

/** A NuGet v3 feed for tests: service index, flat container, registrations, push and delete. */
export interface NugetUpstream extends Loopback {
  /** The service index URL: what a firewall upstream's endpoint is. */
  index: string
  add(id: string, version: string, nupkg: Buffer, published?: string): void
  versions: Map<string, Version[]>
  /** Lower-case ids whose registration answers 500 (a failing upstream). */
  brokenRegistrations: Set<string>
  /**
   * Lower-case ids whose registration index lists this many pages by reference (nuget.org's form
   * for large packages), the versions spread over them; each page answers after a few ms.
   */
  pagedRegistrations: Map<string, number>
  /** Page requests received, and the most answered at once (what the proxy fetches in parallel). */
  pageFetches: { total: number; inFlight: number; maxInFlight: number }
  /** Lower-case ids whose registration pages the index names on another origin (which must relay them here). */
  pagesAt: Map<string, string>
  /** Lower-case ids whose registration lists these items beside its leaves (an upstream's garbage). */
  junkLeaves: Map<string, unknown[]>
  /** Lower-case ids whose paged registration index lists these items beside its pages. */
  junkPages: Map<string, unknown[]>
  /** The Authorization header of the last request for each path (undefined: none sent). */
  authorizations: Map<string, string | undefined>
  /** Pushes received (any body), in order: the multipart body's content type. */
  pushes: string[]
}

/** Starts the feed; push and delete need `X-NuGet-ApiKey: apiKey`. */
export async function startNugetUpstream(options: { apiKey: string }): Promise<NugetUpstream> {
  const versions = new Map<string, Version[]>()
  const add = (id: string, version: string, nupkg: Buffer, published = '2020-01-01T00:00:00Z') => {
    const list = versions.get(id.toLowerCase()) ?? []
    list.push({ id, version, nupkg, published, listed: true, license: nuspecOf(nupkg)?.license })
    versions.set(id.toLowerCase(), list)
  }
  let base = ''
  const brokenRegistrations = new Set<string>()
  const pagedRegistrations = new Map<string, number>()
  const pageFetches = { total: 0, inFlight: 0, maxInFlight: 0 }
  const pagesAt = new Map<string, string>()
  const junkLeaves = new Map<string, unknown[]>()
  const junkPages = new Map<string, unknown[]>()
  const authorizations = new Map<string, string | undefined>()
  const pushes: string[] = []
  const loopback = await startLoopback(async (req, res, url) => {
    const path = url.pathname
    authorizations.set(path, req.headers.authorization)
    const json = (body: unknown) => send(res, 200, JSON.stringify(body), 'application/json')
    if (path === '/v3/index.json') {
      return json({
        version: '3.0.0',
        resources: [
          { '@id': `${base}/flat/`, '@type': 'PackageBaseAddress/3.0.0' },
          { '@id': `${base}/reg/`, '@type': 'RegistrationsBaseUrl/3.6.0' },
          { '@id': `${base}/api/v2/package`, '@type': 'PackagePublish/2.0.0' },
        ],
      })
    }
    if (path.startsWith('/api/v2/package')) {
      if (req.headers['x-nuget-apikey'] !== options.apiKey) return send(res, 403, 'bad api key')
      if (req.method === 'PUT' && path === '/api/v2/package') {
        pushes.push(String(req.headers['content-type']))
        const form = await new Response(new Uint8Array(await bodyOf(req)), {
          headers: { 'content-type': req.headers['content-type']! },
        }).formData()
        const file = [...form.values()].find((v) => typeof v !== 'string') as File
        const bytes = Buffer.from(await file.arrayBuffer())
        const spec = nuspecOf(bytes)!
        add(spec.id, spec.version, bytes, new Date().toISOString())
        return send(res, 201)
      }
      const m = /^\/api\/v2\/package\/([^/]+)\/([^/]+)$/.exec(path)
      const entry = m && versions.get(m[1].toLowerCase())?.find((v) => v.version.toLowerCase() === m[2].toLowerCase())
      if (req.method === 'DELETE' && entry) {
        entry.listed = false
        return send(res, 204)
      }
      return send(res, 404)
    }
    const flat = /^\/flat\/([^/]+)\/(?:index\.json|([^/]+)\/([^/]+))$/.exec(path)
    const list = flat ? versions.get(flat[1]) : undefined
    if (flat && list) {
      if (!flat[2]) return json({ versions: list.map((v) => v.version.toLowerCase()) })
      const entry = list.find((v) => v.version.toLowerCase() === flat[2])
      if (entry && flat[3] === `${flat[1]}.${flat[2]}.nupkg`)
        return send(res, 200, entry.nupkg, 'application/octet-stream')
    }
    const page = /^\/reg\/([^/]+)\/page\/(\d+)\.json$/.exec(path)
    const pages = page ? pagedRegistrations.get(page[1]) : undefined
    if (page && pages !== undefined) {
      pageFetches.total++
      pageFetches.maxInFlight = Math.max(pageFetches.maxInFlight, ++pageFetches.inFlight)
      // An upstream's latency: pages fetched in parallel are all in flight meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 5))
      pageFetches.inFlight--
      const all = leavesOf(page[1])
      const size = Math.ceil(all.length / pages)
      return json({ items: all.slice(Number(page[2]) * size, (Number(page[2]) + 1) * size) })
    }
    const reg = /^\/reg\/([^/]+)\/index\.json$/.exec(path)
    if (reg && brokenRegistrations.has(reg[1])) return send(res, 500, 'registration store down')
    const regList = reg ? versions.get(reg[1]) : undefined
    const paged = reg ? pagedRegistrations.get(reg[1]) : undefined
    if (reg && regList && paged !== undefined)
      return json({
        count: paged,
        items: [
          ...Array.from({ length: paged }, (_, k) => ({
            '@id': `${pagesAt.get(reg[1]) ?? base}/reg/${reg[1]}/page/${k}.json`,
            count: 0,
          })),
          ...(junkPages.get(reg[1]) ?? []),
        ],
      })
    if (reg && regList) {
      const items = leavesOf(reg[1])
      return json({
        count: 1,
        items: [
          {
            '@id': `${base}/reg/${reg[1]}/index.json#page`,
            count: items.length,
            lower: regList[0].version,
            upper: regList.at(-1)!.version,
            items,
          },
        ],
      })
    }
    send(res, 404, 'not found')
  })
  /** The registration leaves of lower-case `id`, as the feed lists them. */
  function leavesOf(id: string): unknown[] {
    return [...leavesListed(id), ...(junkLeaves.get(id) ?? [])]
  }
  function leavesListed(id: string) {
    return (versions.get(id) ?? []).map((v) => ({
      '@id': `${base}/reg/${id}/${v.version.toLowerCase()}.json`,
      catalogEntry: {
        id: v.id,
        version: v.version,
        published: v.listed ? v.published : '1900-01-01T00:00:00Z',
        listed: v.listed,
        licenseExpression: v.license,
      },
      packageContent: `${base}/flat/${id}/${v.version.toLowerCase()}/${id}.${v.version.toLowerCase()}.nupkg`,
    }))
  }
  base = loopback.url
  return {
    ...loopback,
    index: `${loopback.url}/v3/index.json`,
    add,
    versions,
    brokenRegistrations,
    pagedRegistrations,
    pageFetches,
    pagesAt,
    junkLeaves,
    junkPages,
    authorizations,
    pushes,
  }
}
