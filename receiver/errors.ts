/**
 * Why a delivery was refused. Codes are stable snake_case; messages never carry a secret,
 * a signature or the body.
 */
export type VerificationCode =
  'missing_headers' | 'invalid_timestamp' | 'timestamp_too_old' | 'timestamp_too_new' | 'no_matching_signature'

/** The request is not a genuine, fresh delivery from the sender (answer 400 or 401). */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'
  constructor(
    readonly code: VerificationCode,
    message: string,
  ) {
    super(message)
  }

  /** 400 for a request that is not a delivery at all, 401 for one that is not authentic or too old. */
  get status(): 400 | 401 {
    return this.code === 'missing_headers' || this.code === 'invalid_timestamp' ? 400 : 401
  }
}

/** A verified body that is not a version-1 envelope of known events (answer 400). */
export class WebhookParseError extends Error {
  override readonly name = 'WebhookParseError'
  readonly status = 400
  constructor(
    readonly code: 'invalid_json' | 'invalid_envelope' | 'unsupported_version' | 'invalid_event' | 'unknown_event_type',
    message: string,
  ) {
    super(message)
  }
}

/** The receiver's own configuration is unusable (no secret, a secret that is not base64). */
export class ReceiverConfigError extends Error {
  override readonly name = 'ReceiverConfigError'
}
