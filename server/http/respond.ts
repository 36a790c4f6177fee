import type { H3Event } from 'h3'
import type { Problem } from './problem'

/** Sends JSON (or nothing for 204) with the given status and headers. */
export function sendJson(
  event: H3Event,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): string | null {
  const res = event.node.res
  res.statusCode = status
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  if (status === 204 || body === undefined) return null
  res.setHeader('content-type', 'application/json; charset=utf-8')
  return JSON.stringify(body)
}

/** Sends a body that is already serialised JSON (cached hot paths; a JSON media type of its own, e.g. CycloneDX). */
export function sendSerialized(
  event: H3Event,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
  mediaType = 'application/json',
): string | Buffer {
  sendJson(event, status, undefined, headers)
  event.node.res.setHeader('content-type', `${mediaType}; charset=utf-8`)
  return body
}

export function sendProblem(event: H3Event, problem: Problem, headers: Record<string, string> = {}): string {
  const res = event.node.res
  res.statusCode = problem.status
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.setHeader('content-type', 'application/problem+json')
  return JSON.stringify(problem)
}
