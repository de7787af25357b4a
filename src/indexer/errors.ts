/**
 * Errors in viem's style: a short message for logs and users, the original
 * error as `cause`, and optional details.
 */
export class IndexerError extends Error {
  readonly shortMessage: string
  readonly details: string | undefined

  constructor(shortMessage: string, options: { cause?: unknown; details?: string } = {}) {
    super(options.details ? `${shortMessage}\n\nDetails: ${options.details}` : shortMessage, {
      cause: options.cause,
    })
    this.name = 'IndexerError'
    this.shortMessage = shortMessage
    this.details = options.details
  }
}

export class ChainIdMismatchError extends IndexerError {
  constructor(expected: number, actual: number, endpoint = 'the node at RPC_URL') {
    super(`Chain id mismatch: CHAIN_ID is ${expected} but ${endpoint} reports ${actual}`)
    this.name = 'ChainIdMismatchError'
  }
}

export class LeaderLockLostError extends IndexerError {
  constructor(cause?: unknown) {
    super('Lost the indexer leader lock connection', { cause })
    this.name = 'LeaderLockLostError'
  }
}

/** One line for a log: the short message plus the innermost cause's message. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const head = err instanceof IndexerError ? err.shortMessage : firstLine(err)
  let cause: unknown = err.cause
  let innermost: Error | undefined
  while (cause instanceof Error) {
    innermost = cause
    cause = cause.cause
  }
  return innermost ? `${head}: ${firstLine(innermost)}` : head
}

function firstLine(err: Error): string {
  const short = (err as { shortMessage?: unknown }).shortMessage
  const text = typeof short === 'string' && short ? short : err.message
  return text.split('\n')[0] ?? ''
}

export function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')
}
