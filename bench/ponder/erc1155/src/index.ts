import { ponder } from 'ponder:registry'
import { balances, tokens, transfers } from 'ponder:schema'

const ZERO = '0x0000000000000000000000000000000000000000'

type Context = Parameters<Parameters<typeof ponder.on<'ERC1155:TransferSingle'>>[1]>[0]['context']
type Event = Parameters<Parameters<typeof ponder.on<'ERC1155:TransferSingle'>>[1]>[0]['event']

/** One id/value pair: its transfer row, the two balances and the token's supply. */
async function apply(
  context: Context,
  event: Pick<Event, 'id' | 'log' | 'block' | 'transaction'>,
  from: `0x${string}`,
  to: `0x${string}`,
  pairs: readonly (readonly [bigint, bigint])[],
) {
  const collection = event.log.address
  await context.db.insert(transfers).values(
    pairs.map(([tokenId, amount], batchIndex) => ({
      id: `${event.id}-${batchIndex}`,
      collection,
      tokenId,
      from,
      to,
      amount,
      blockNumber: event.block.number,
      logIndex: event.log.logIndex,
      batchIndex,
      transactionHash: event.transaction.hash,
      timestamp: event.block.timestamp,
    })),
  )
  for (const [tokenId, amount] of pairs) {
    if (from !== ZERO)
      await context.db
        .insert(balances)
        .values({ collection, tokenId, owner: from, balance: -amount })
        .onConflictDoUpdate((row) => ({ balance: row.balance - amount }))
    if (to !== ZERO)
      await context.db
        .insert(balances)
        .values({ collection, tokenId, owner: to, balance: amount })
        .onConflictDoUpdate((row) => ({ balance: row.balance + amount }))
    const delta = (from === ZERO ? amount : 0n) - (to === ZERO ? amount : 0n)
    await context.db
      .insert(tokens)
      .values({ collection, tokenId, supply: delta, lastBlock: event.block.number })
      .onConflictDoUpdate((row) => ({ supply: row.supply + delta, lastBlock: event.block.number }))
  }
}

ponder.on('ERC1155:TransferSingle', async ({ event, context }) => {
  await apply(context, event, event.args.from, event.args.to, [[event.args.id, event.args.value]])
})

ponder.on('ERC1155:TransferBatch', async ({ event, context }) => {
  const { ids, values } = event.args
  await apply(
    context,
    event,
    event.args.from,
    event.args.to,
    ids.map((id, i) => [id, values[i]!] as const),
  )
})
