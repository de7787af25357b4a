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

/** The database was indexed from another chain under this NETWORK: no restart changes that. */
export class DatabaseChainMismatchError extends IndexerError {
  constructor(network: string, stored: bigint | number, configured: number) {
    super(`The database holds network "${network}" of chain ${stored}, not chain ${configured}`)
    this.name = 'DatabaseChainMismatchError'
  }
}

export class LeaderLockLostError extends IndexerError {
  constructor(cause?: unknown) {
    super('Lost the indexer leader lock connection', { cause })
    this.name = 'LeaderLockLostError'
  }
}

/**
 * An error and the errors of its `cause` chain, outermost first: the one way
 * the indexer looks into what an error wraps.
 */
export function* errorChain(err: unknown): Generator<Error> {
  for (let e: unknown = err; e instanceof Error; e = e.cause) yield e
}

/** One line for a log: the short message plus the innermost cause's message. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const head = err instanceof IndexerError ? err.shortMessage : firstLine(err)
  let innermost: Error | undefined
  for (const e of errorChain(err.cause)) innermost = e
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
