import { ERC1155 } from 'generated'

const ZERO = '0x0000000000000000000000000000000000000000'

type Context = Parameters<Parameters<typeof ERC1155.TransferSingle.handler>[0]>[0]['context']
type Event = Parameters<Parameters<typeof ERC1155.TransferSingle.handler>[0]>[0]['event']

/** One log's id/value pairs: a transfer row each, the two balances and the token's supply. */
async function apply(
  context: Context,
  event: Event | Parameters<Parameters<typeof ERC1155.TransferBatch.handler>[0]>[0]['event'],
  ids: bigint[],
  values: bigint[],
) {
  const collection = event.srcAddress.toLowerCase()
  const from = event.params.from.toLowerCase()
  const to = event.params.to.toLowerCase()
  for (let i = 0; i < ids.length; i++) {
    const tokenId = ids[i]!
    const amount = values[i]!
    context.Transfer.set({
      id: `${event.transaction.hash}:${event.logIndex}:${i}`,
      collection,
      tokenId,
      from,
      to,
      amount,
      blockNumber: BigInt(event.block.number),
      logIndex: event.logIndex,
      batchIndex: i,
      transactionHash: event.transaction.hash,
    })
    for (const [owner, delta] of [
      [from, -amount],
      [to, amount],
    ] as const) {
      if (owner === ZERO) continue
      const id = `${collection}:${tokenId}:${owner}`
      const row = await context.Balance.get(id)
      context.Balance.set({ id, collection, tokenId, owner, balance: (row?.balance ?? 0n) + delta })
    }
    const supplyDelta = (from === ZERO ? amount : 0n) - (to === ZERO ? amount : 0n)
    if (supplyDelta !== 0n) {
      const id = `${collection}:${tokenId}`
      const token = await context.Token.get(id)
      context.Token.set({ id, collection, tokenId, supply: (token?.supply ?? 0n) + supplyDelta })
    }
  }
}

ERC1155.TransferSingle.handler(async ({ event, context }) => {
  await apply(context, event, [event.params.id], [event.params.value])
})

ERC1155.TransferBatch.handler(async ({ event, context }) => {
  await apply(context, event, event.params.ids, event.params.values)
})
