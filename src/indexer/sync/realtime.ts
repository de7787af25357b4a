import type { RpcBlock } from '../chain'
import { ChainChangedError, fetchRealtimeBlocks, getHeaders } from './fetch'
import { commitFetched, cursorOf, ReorgDetectedError, type Syncer } from './syncer'

/**
 * Follows unconfirmed blocks one header at a time: each new block must name
 * the stored tip as its parent, otherwise the chain reorganised. Logs are
 * read by block hash, so they belong to exactly the header that was checked.
 */
export async function syncRealtime(s: Syncer, head: bigint, known: RpcBlock | null = null): Promise<void> {
  const from = cursorOf(s)
  const to =
    head < from + BigInt(s.options.realtimeBatch) - 1n ? head : from + BigInt(s.options.realtimeBatch) - 1n
  const numbers: bigint[] = []
  for (let n = from; n <= to; n++) numbers.push(n)
  // A header read with the head (sync.ts, readNearTip) is not asked again.
  const missing = numbers.filter((n) => n !== known?.number)
  const byNumber = missing.length > 0 ? await getHeaders(s.ctx.rpc, missing) : new Map<bigint, RpcBlock>()
  if (known) byNumber.set(known.number, known)
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
