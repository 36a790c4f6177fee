import { getRequestHeader, send, setResponseHeader, setResponseStatus, type H3Error, type H3Event } from 'h3'
import { DomainError } from '../common/errors'
import { errorPage } from '../dashboard/handler'
import { problemOf, toProblem, unroutedProblem, type Problem } from '../http/problem'
import { sendProblem } from '../http/respond'
import { logger } from './logger'
import { useServices } from './runtime'

/**
 * What a request no route answers gets (Nitro's `errorHandler`): a path no route matches, a
 * method a route does not take, or an error a route file let through. The API, the registry and
 * the dashboard answer their own errors; this covers the rest of the origin, so that nothing
 * answers in Nitro's own JSON (which put the path in the status line) or with a stack.
 * A browser asking for a page nobody serves gets the dashboard's error page, anything else a
 * problem (RFC 9457).
 */
export default async function answerUnrouted(error: H3Error, event: H3Event): Promise<void> {
  const status = error.statusCode ?? 500
  const path = event.path.split('?')[0]
  let problem: Problem
  let headers: Record<string, string> = {}
  if (status === 404 || status === 405) problem = unroutedProblem(event.method, event.path, status, 'nothing is served')
  else if (status < 500) problem = problemOf(status, 'bad_request', 'the request could not be read')
  else {
    // The cause, for the log only: a route file's failure (h3 wraps it), never shown to the client.
    const cause = error.cause ?? error
    ;({ problem, headers } = toProblem(cause))
    logger.error('request failed outside the routes', { path, error: (cause as Error)?.stack ?? String(cause) })
  }
  // Mid-answer (a stream that failed): cut the connection, so the client sees a failure and not a
  // shorter body that looks whole.
  if (event.node.res.headersSent) {
    event.node.res.destroy()
    return
  }
  // h3 put its own message in the status line ("Cannot find any route matching ..."): the title instead.
  setResponseStatus(event, problem.status, problem.title)
  setResponseHeader(event, 'cache-control', 'no-store')
  setResponseHeader(event, 'x-content-type-options', 'nosniff')
  // A page only for a page nobody serves: any other failure is a problem, for a browser too.
  if (problem.status === 404 && wantsPage(event)) {
    const trustProxy = await useServices()
      .then((services) => services.config.trustProxy)
      .catch(() => null)
    if (trustProxy)
      return send(event, errorPage(event, new DomainError('not_found', problem.code, problem.detail), trustProxy))
  }
  return send(event, sendProblem(event, problem, headers))
}

/** A browser navigating (it asks for HTML first), not an API or registry client. */
function wantsPage(event: H3Event): boolean {
  return event.method === 'GET' && (getRequestHeader(event, 'accept') ?? '').startsWith('text/html')
}
