import { ERC721 } from 'generated'

ERC721.Transfer.handler(async ({ event, context }) => {
  const collection = event.srcAddress.toLowerCase()
  const to = event.params.to.toLowerCase()
  context.Transfer.set({
    id: `${event.transaction.hash}:${event.logIndex}:0`,
    collection,
    tokenId: event.params.tokenId,
    from: event.params.from.toLowerCase(),
    to,
    blockNumber: BigInt(event.block.number),
    logIndex: event.logIndex,
    transactionHash: event.transaction.hash,
  })
  context.Token.set({
    id: `${collection}:${event.params.tokenId}`,
    collection,
    tokenId: event.params.tokenId,
    owner: to,
  })
})
