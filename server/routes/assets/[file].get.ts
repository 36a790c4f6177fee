import { defineEventHandler, getRouterParam } from 'h3'
import { serveAsset } from '../../dashboard/assets'

/** `/assets/dashboard.css` and `/assets/dashboard.js`, served from the bundle (no CDN). */
export default defineEventHandler((event) => serveAsset(event, getRouterParam(event, 'file') ?? ''))
