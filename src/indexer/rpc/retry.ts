import { sleep } from '../util/sleep'
/** Exponential backoff with "equal jitter": half fixed, half random, so retries spread out. */
export function backoffDelay(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt)
  return ceiling / 2 + Math.random() * (ceiling / 2)
}

/**
 * The wait before retrying an RPC request after its `attempt`-th transient
 * failure (0 first): 250 ms doubling to 15 s, half random (docs/indexer.md,
 * "Sync", Retries). A 429's Retry-After is honoured on top, by the endpoint.
 */
export const rpcRetryDelay = (attempt: number): number => backoffDelay(attempt, 250, 15_000)

/**
 * Reads again, after 0.1, 0.2, 0.3 and 0.4 s (`again` times, each 0.1 s
 * longer), while the answer says the node does not have the block yet
 * (`null`): a node behind the others (a load-balanced provider, near the
 * head) is lag, never a sign that the block is gone. Resolves with the last
 * answer, which may still be absent.
 */
export async function readWhileBehind<T>(
  read: () => Promise<T>,
  present: (answer: T) => boolean,
  signal?: AbortSignal,
  again = 4,
): Promise<T> {
  let answer = await read()
  for (let attempt = 1; !present(answer) && attempt <= again; attempt++) {
    await sleep(100 * attempt, signal)
    answer = await read()
  }
  return answer
}
