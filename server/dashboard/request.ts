import { readRawBody, type H3Event } from 'h3'
import { HttpProblem } from '../http/problem'
import { requestHost } from '../http/request-origin'
import type { TrustProxy } from '../http/trust-proxy'

/** Largest form body the dashboard reads (an approval's exception JSON fits easily). */
const FORM_LIMIT = 256 * 1024

/** A submitted form: first value of a field, or all values of a repeated one (checkboxes). */
export class Form {
  constructor(private readonly params: URLSearchParams) {}
  get(name: string): string | undefined {
    return this.params.get(name) ?? undefined
  }
  /** Trimmed value, or undefined when empty. */
  text(name: string): string | undefined {
    const value = this.params.get(name)?.trim()
    return value ? value : undefined
  }
  all(name: string): string[] {
    return this.params.getAll(name)
  }
}

/** Reads an `application/x-www-form-urlencoded` body (the only kind dashboard forms send). */
export async function readForm(event: H3Event): Promise<Form> {
  const length = Number(event.node.req.headers['content-length'] ?? 0)
  if (length > FORM_LIMIT) throw new HttpProblem(413, 'body_too_large', 'form too large')
  const body = (await readRawBody(event, 'utf8')) ?? ''
  if (body.length > FORM_LIMIT) throw new HttpProblem(413, 'body_too_large', 'form too large')
  return new Form(new URLSearchParams(body))
}

/** A same-site path to return to after sign-in; anything else falls back to the home page. */
export function safeNext(next: string | undefined): string | undefined {
  return next && /^\/(?!\/)[^\\\s]*$/.test(next) ? next : undefined
}

/**
 * Where "Go back" leads: the page the browser came from when it is a page of this host
 * (Referrer-Policy same-origin sends nothing else), else `fallback`. A link, not
 * `javascript:history.back()`, which the CSP refuses.
 */
export function backLink(event: H3Event, fallback: string, trustProxy: TrustProxy): string {
  const referer = event.node.req.headers.referer
  if (!referer) return fallback
  try {
    const url = new URL(referer)
    if (url.host !== requestHost(event, trustProxy)) return fallback
    return safeNext(url.pathname + url.search) ?? fallback
  } catch {
    return fallback
  }
}
