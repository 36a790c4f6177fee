import type { CallContext as AreaCallContext } from '../auth/call-context'
import type { AppServices } from './runtime'

export { actorOfCall, nowIso } from '../auth/call-context'
export type CallContext<P = AppServices> = AreaCallContext<P>
