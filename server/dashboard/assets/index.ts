import { createHash } from 'node:crypto'
import { setResponseHeader, setResponseStatus, getRequestHeader, type H3Event } from 'h3'
import css from './dashboard.css'
import js from 'raw:./dashboard.js'
import { MACHINE_SVG_STYLE } from '../diagram/svg'
import { SELECTOR_BUILDER_STYLE } from '../selector-builder'

/**
 * The dashboard's only stylesheet and script, bundled as text by Nitro's raw loader, answered
 * with an ETag so browsers revalidate cheaply after a deploy. The machine diagrams' styles
 * ride in the stylesheet: the CSP refuses a `<style>` inside the page. A Map, so a file named
 * `constructor` is simply not found.
 */
const ASSETS = new Map(
  [
    [
      'dashboard.css',
      'text/css; charset=utf-8',
      `${css}\n/* machine diagrams */${MACHINE_SVG_STYLE}\n/* rule selector builder */${SELECTOR_BUILDER_STYLE}`,
    ],
    ['dashboard.js', 'text/javascript; charset=utf-8', js],
  ].map(
    ([name, type, body]) =>
      [name, { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` }] as const,
  ),
)

export function serveAsset(event: H3Event, name: string) {
  const asset = ASSETS.get(name)
  if (!asset) {
    setResponseStatus(event, 404)
    return 'not found'
  }
  setResponseHeader(event, 'etag', asset.etag)
  setResponseHeader(event, 'cache-control', 'no-cache')
  if (getRequestHeader(event, 'if-none-match') === asset.etag) {
    setResponseStatus(event, 304)
    return ''
  }
  setResponseHeader(event, 'content-type', asset.type)
  return asset.body
}
