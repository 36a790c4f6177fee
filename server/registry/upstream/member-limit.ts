import { problemOf } from '../../http/problem'
import { RegistryError } from '../responses'

/**
 * Most members one object or array of an upstream JSON answer may hold (versions, times,
 * dist-tags, releases, catalog items): every walk over such a record starts with one key listing
 * that cannot take turns (200,000 empty versions, 2.4 MB, held the loop 0.7 s). The largest real
 * npm packuments hold about 30,000 versions.
 */
export const UPSTREAM_MAX_MEMBERS = 50_000

/** An upstream JSON answer with a record past `UPSTREAM_MAX_MEMBERS`: 502, nothing cached. */
export class UpstreamTooManyMembers extends RegistryError {
  readonly code = 'upstream_too_many_members'

  constructor(
    readonly upstream: string,
    readonly what: string,
  ) {
    super(
      502,
      `${what} from upstream ${upstream} holds a record of more than ${UPSTREAM_MAX_MEMBERS} members (versions, times or tags); it was refused`,
    )
  }

  override get contentType(): string {
    return 'application/problem+json'
  }

  override body(): Record<string, unknown> {
    return { ...problemOf(502, this.code, this.message, { limit: UPSTREAM_MAX_MEMBERS }), error: this.message }
  }
}
