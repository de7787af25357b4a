/**
 * The small, hand-checkable index the API contract tests read: a few
 * collections of every kind (named, symbol-less, with empty metadata, with
 * LIKE metacharacters in the name, deployed before START_BLOCK), tokens with
 * and without metadata and stored media, the largest uint256 token id,
 * transfers, and a burn. Written through the indexer's functions (see
 * api-fixtures.ts).
 */
import type pg from 'pg'
import { addr, jsonDataUri, SimulatedChain, svgDataUri, ZERO } from './api-fixtures'

export const MAX_UINT256 = 2n ** 256n - 1n

export const people = {
  alice: addr('alice'),
  bob: addr('bob'),
  carol: addr('carol'),
}

export const c = {
  /** Named, with contract metadata, per-token metadata and stored SVG media. */
  pioneers: addr('pioneers'),
  /** Name only (symbol reverts), token ids up to 2^256 - 1, no token metadata. */
  glyphs: addr('glyphs'),
  /** Neither name nor symbol: "metadata recorded as empty" (not listed). */
  anonymous: addr('anonymous'),
  /** LIKE metacharacters in the name. */
  percent: addr('percent'),
  /** Deployed before the indexed window's start (coverage partial). */
  ancient: addr('ancient'),
}

export interface Dataset {
  chain: SimulatedChain
  mediaDir: string
}

export async function buildDataset(pool: pg.Pool, mediaDir: string, startBlock = 100n): Promise<Dataset> {
  const chain = new SimulatedChain(pool, { startBlock })
  await chain.init()
  chain.contracts.set(c.pioneers, {
    name: 'Genesis Pioneers',
    symbol: 'PION',
    contractUri: jsonDataUri({ description: 'Pioneers of the devnet.' }),
    deployBlock: startBlock,
    creator: people.carol,
    tokenUri: (id) =>
      id % 5n === 0n
        ? undefined
        : jsonDataUri({ name: `Pioneer #${id}`, image: svgDataUri(`pioneer ${id}`), description: 'x' }),
  })
  chain.contracts.set(c.glyphs, { name: 'Onchain Glyphs', deployBlock: startBlock + 1n })
  chain.contracts.set(c.anonymous, { deployBlock: startBlock + 1n })
  chain.contracts.set(c.percent, { name: '100%_Off Club', symbol: 'P_C', deployBlock: startBlock + 2n })
  chain.contracts.set(c.ancient, { name: 'Ancient Relics', symbol: 'OLD', deployBlock: 5n })

  // Block 1 of the window: pioneers 1..12 to alice and bob.
  await chain.mine(1, (_b, emit) => {
    for (let id = 1n; id <= 12n; id++)
      emit({ collection: c.pioneers, tokenId: id, from: ZERO, to: id % 2n ? people.alice : people.bob })
  })
  // Glyphs, including the largest id; the anonymous contract.
  await chain.mine(1, (_b, emit) => {
    emit({ collection: c.glyphs, tokenId: 0n, from: ZERO, to: people.alice })
    emit({ collection: c.glyphs, tokenId: 10n, from: ZERO, to: people.alice })
    emit({ collection: c.glyphs, tokenId: 9n, from: ZERO, to: people.bob })
    emit({ collection: c.glyphs, tokenId: MAX_UINT256, from: ZERO, to: people.alice })
    emit({ collection: c.anonymous, tokenId: 1n, from: ZERO, to: people.carol })
  })
  await chain.mine(1, (_b, emit) => {
    emit({ collection: c.percent, tokenId: 7n, from: ZERO, to: people.bob })
    emit({ collection: c.ancient, tokenId: 3n, from: people.carol, to: people.bob })
  })
  // Transfers and a burn, several per block.
  await chain.mine(3, (b, emit) => {
    const k = b - startBlock
    emit({ collection: c.pioneers, tokenId: k, from: k % 2n ? people.alice : people.bob, to: people.carol })
    emit({
      collection: c.pioneers,
      tokenId: k + 3n,
      from: (k + 3n) % 2n ? people.alice : people.bob,
      to: people.carol,
    })
  })
  await chain.mine(1, (_b, emit) => {
    emit({ collection: c.pioneers, tokenId: 4n, from: people.carol, to: ZERO })
    emit({ collection: c.glyphs, tokenId: 9n, from: people.bob, to: ZERO })
  })
  // Two more empty blocks on top, confirmed 1 deep.
  await chain.mine(2, () => {}, { confirmations: 1n })
  await chain.describeCollections()
  await chain.fetchTokenMetadata(mediaDir)
  return { chain, mediaDir }
}
