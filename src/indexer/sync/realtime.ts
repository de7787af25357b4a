import { ChainChangedError, fetchRealtimeBlocks, getHeaders } from './fetch'
import { commitFetched, cursorOf, ReorgDetectedError, type Syncer } from './syncer'

/**
 * Follows unconfirmed blocks one header at a time: each new block must name
 * the stored tip as its parent, otherwise the chain reorganised. Logs are
 * read by block hash, so they belong to exactly the header that was checked.
 */
export async function syncRealtime(s: Syncer, head: bigint): Promise<void> {
  const from = cursorOf(s)
  const to =
    head < from + BigInt(s.options.realtimeBatch) - 1n ? head : from + BigInt(s.options.realtimeBatch) - 1n
  const numbers: bigint[] = []
  for (let n = from; n <= to; n++) numbers.push(n)
  const byNumber = await getHeaders(s.ctx.rpc, numbers)
  const headers = numbers.map((n) => byNumber.get(n)!)
  const tip = s.tip
  if (tip?.hash && tip.number === from - 1n && headers[0]!.parentHash.toLowerCase() !== tip.hash) {
    throw new ReorgDetectedError(from)
  }
  for (let i = 1; i < headers.length; i++) {
    if (headers[i]!.parentHash !== headers[i - 1]!.hash) {
      throw new ChainChangedError(
        `block ${headers[i]!.number} does not follow block ${headers[i - 1]!.number}`,
      )
    }
  }
  await commitFetched(s, [await fetchRealtimeBlocks(s.ctx, headers)])
}
