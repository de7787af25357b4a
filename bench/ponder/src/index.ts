import { ponder } from 'ponder:registry'
import { tokens, transfers } from 'ponder:schema'

ponder.on('ERC721:Transfer', async ({ event, context }) => {
  const collection = event.log.address
  await context.db.insert(transfers).values({
    id: event.id,
    collection,
    tokenId: event.args.tokenId,
    from: event.args.from,
    to: event.args.to,
    blockNumber: event.block.number,
    logIndex: event.log.logIndex,
    transactionHash: event.transaction.hash,
    timestamp: event.block.timestamp,
  })
  await context.db
    .insert(tokens)
    .values({ collection, tokenId: event.args.tokenId, owner: event.args.to, lastBlock: event.block.number })
    .onConflictDoUpdate({ owner: event.args.to, lastBlock: event.block.number })
})
