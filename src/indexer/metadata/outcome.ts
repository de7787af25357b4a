import { IndexerError } from '../errors'

/** Named outcome of a token's metadata, stored in tokens.metadata_status. */
export type MetadataOutcome =
  | 'ok'
  | 'pending'
  | 'timeout'
  | 'too_large'
  | 'unsupported_type'
  | 'http_error'
  | 'invalid_json'
  | 'uri_reverted'
  | 'blocked_address'
  | 'invalid_uri'

/** A failed metadata or media step; `transient` failures are retried with backoff. */
export class FetchFailure extends IndexerError {
  /** The host itself is unwell (timeout, connection failure, 429, 502-504): counts toward its breaker. */
  hostFault = false
  /** A 429/503 Retry-After, in milliseconds. */
  retryAfterMs: number | undefined
  constructor(
    readonly outcome: Exclude<MetadataOutcome, 'ok' | 'pending'>,
    message: string,
    readonly transient = false,
    cause?: unknown,
  ) {
    super(message, { cause })
    this.name = 'FetchFailure'
  }
}
