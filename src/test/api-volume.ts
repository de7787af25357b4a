/**
 * A larger simulated index (thousands of rows) for the pagination walks, the
 * EXPLAIN checks and the property tests, and an "indexer that keeps
 * inserting": new blocks with mints, transfers, burns and new collections,
 * committed through the indexer's commitBatch while a test pages.
 *
 * The walked owner (`holder`) only ever receives tokens, and tokens of the
 * walked collection (`big`) are only ever minted above the existing ids, so
 * every row that exists when a walk starts stays in place while it runs.
 */
import type pg from 'pg'
import type { Hex } from 'viem'
import { addr, jsonDataUri, SimulatedChain, svgDataUri, ZERO } from './api-fixtures'

export const volume = {
  holder: addr('volume-holder'),
  others: Array.from({ length: 40 }, (_, i) => addr(`volume-other-${i}`)),
  big: addr('volume-big'),
}

export interface VolumeIndex {
  chain: SimulatedChain
  collections: Hex[]
  /** Next token id to mint per collection. */
  nextId: Map<Hex, bigint>
  /** Tokens owned by `others`, by collection (for transfers and burns). */
  movable: Array<{ collection: Hex; tokenId: bigint; owner: Hex }>
}

function pick<T>(items: T[], seed: number): T {
  return items[seed % items.length]!
}

/** `collections` contracts, about `transfers` transfers in total; `big` holds a third of the mints. */
export async function buildVolume(
  pool: pg.Pool,
  options: { collections: number; blocks: number; perBlock: number; mediaDir?: string },
): Promise<VolumeIndex> {
  const chain = new SimulatedChain(pool, { startBlock: 1n })
  await chain.init()
  const collections: Hex[] = [volume.big]
  for (let i = 1; i < options.collections; i++) collections.push(addr(`volume-collection-${i}`))
  collections.forEach((address, i) => {
    chain.contracts.set(address, {
      name:
        i % 17 === 3
          ? ''
          : `${i % 2 ? 'Azure' : 'Crimson'} ${['Apes', 'Punks', 'Birds', 'Glyphs'][i % 4]} ${i}`,
      symbol: i % 17 === 3 ? undefined : `S${i}`,
      deployBlock: 1n,
      tokenUri: (id) =>
        id % 7n === 0n ? jsonDataUri({ name: `#${id}`, image: svgDataUri(`${i}:${id}`) }) : undefined,
    })
  })
  const index: VolumeIndex = { chain, collections, nextId: new Map(), movable: [] }
  // Every contract first mints one token, so every collection exists.
  await chain.mine(1, (_block, emit) => {
    collections.forEach((collection, i) => {
      const to = volume.others[i % volume.others.length]!
      emit({ collection, tokenId: 1n, from: ZERO, to })
      index.nextId.set(collection, 2n)
      if (collection !== volume.big) index.movable.push({ collection, tokenId: 1n, owner: to })
    })
  })
  let seed = 0
  for (let done = 0; done < options.blocks; done += 20) {
    await chain.mine(Math.min(20, options.blocks - done), (_block, emit) => {
      for (let k = 0; k < options.perBlock; k++) emitActivity(index, emit, seed++)
    })
  }
  await chain.describeCollections()
  if (options.mediaDir) await chain.fetchTokenMetadata(options.mediaDir)
  return index
}

type Emit = (t: { collection: Hex; tokenId: bigint; from: Hex; to: Hex }) => void

/** One event: mostly mints (a third into `big`, a fifth to `holder`), some transfers and burns among others. */
function emitActivity(index: VolumeIndex, emit: Emit, seed: number) {
  const kind = seed % 10
  if (kind < 7 || index.movable.length < 10) {
    const collection = seed % 3 === 0 ? volume.big : pick(index.collections, seed * 7 + 1)
    const tokenId = index.nextId.get(collection) ?? 1n
    index.nextId.set(collection, tokenId + 1n)
    const to = seed % 5 === 0 ? volume.holder : pick(volume.others, seed)
    emit({ collection, tokenId, from: ZERO, to })
    if (to !== volume.holder && collection !== volume.big)
      index.movable.push({ collection, tokenId, owner: to })
    return
  }
  const at = (seed * 31) % index.movable.length
  const token = index.movable[at]!
  if (kind === 9) {
    emit({ collection: token.collection, tokenId: token.tokenId, from: token.owner, to: ZERO })
    index.movable.splice(at, 1)
  } else {
    const to = pick(volume.others, seed * 13 + 5)
    emit({ collection: token.collection, tokenId: token.tokenId, from: token.owner, to })
    token.owner = to
  }
}

/**
 * Keeps committing blocks (and now and then a new collection) until stopped,
 * like a live indexer. Returns the number of blocks committed.
 */
export function keepInserting(index: VolumeIndex, options: { perBlock?: number; pauseMs?: number } = {}) {
  let stopped = false
  let blocks = 0
  let seed = 1_000_000
  const running = (async () => {
    while (!stopped) {
      if (blocks % 5 === 4) {
        const address = addr(`volume-late-${blocks}`)
        index.collections.push(address)
        index.chain.contracts.set(address, {
          name: `Late Arrivals ${blocks}`,
          symbol: 'LATE',
          deployBlock: 1n,
        })
      }
      await index.chain.mine(1, (_block, emit) => {
        for (let k = 0; k < (options.perBlock ?? 5); k++) emitActivity(index, emit, seed++)
      })
      await index.chain.describeCollections()
      blocks++
      await new Promise((r) => setTimeout(r, options.pauseMs ?? 5))
    }
  })()
  return {
    async stop(): Promise<number> {
      stopped = true
      await running
      return blocks
    },
  }
}
