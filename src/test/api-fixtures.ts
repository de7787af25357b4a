/**
 * Index contents for API tests, written only through the indexer's own write
 * functions — commitBatch (transfers, derived token and collection state,
 * indexer_state), processCollections (name, symbol, listed, deploy block) and
 * processTokens (metadata, image, stored media) — so every row is one the
 * indexer could produce. The chain behind them is simulated: a fake RPC
 * answers the view calls (name(), symbol(), contractURI(), tokenURI(),
 * eth_getCode, eth_getBlockReceipts) from a plain description of the
 * contracts. Metadata documents and images are data: URIs, so nothing goes
 * to the network.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type pg from 'pg'
import pino from 'pino'
import { decodeFunctionData, encodeAbiParameters, type Hex, parseAbi } from 'viem'
import { createPool } from '@/db/client'
import type { RpcBlock } from '@/indexer/chain'
import type { TransferEvent } from '@/indexer/events/types'
import { type CollectionJobDeps, processCollections } from '@/indexer/metadata/collection-info'
import type { FetchLimits } from '@/indexer/metadata/document'
import { processTokens, type TokenJobDeps } from '@/indexer/metadata/token-metadata'
import type { Rpc } from '@/indexer/rpc/client'
import { commitBatch } from '@/indexer/store/commit'
import { ensureIndexerState, readIndexerState } from '@/indexer/store/state'

export const ZERO = '0x0000000000000000000000000000000000000000' as const
export const NETWORK = 'devnet'

/** A deterministic lowercase address from a label. */
export function addr(label: string | number): Hex {
  return `0x${createHash('sha256').update(`addr:${label}`).digest('hex').slice(0, 40)}` as Hex
}

function hash32(label: string): Hex {
  return `0x${createHash('sha256').update(label).digest('hex')}` as Hex
}

export interface FakeContract {
  name?: string
  symbol?: string
  /** contractURI() value; reverts when absent. */
  contractUri?: string
  deployBlock?: bigint
  creator?: Hex
  /** tokenURI(id); reverts when it returns undefined. */
  tokenUri?: (tokenId: bigint) => string | undefined
}

const viewAbi = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function contractURI() view returns (string)',
  'function tokenURI(uint256 tokenId) view returns (string)',
])

class Revert extends Error {
  constructor() {
    super('execution reverted')
  }
}

/** Just enough of the Rpc interface for the indexer's metadata jobs. */
export function fakeRpc(contracts: Map<string, FakeContract>): Rpc {
  const encode = (value: string | undefined) => {
    if (value === undefined) throw new Revert()
    return encodeAbiParameters([{ type: 'string' }], [value])
  }
  // Deployments by block, rebuilt when contracts are added.
  let byBlock = new Map<bigint, Array<[string, FakeContract]>>()
  let indexed = -1
  const deploymentsIn = (block: bigint) => {
    if (indexed !== contracts.size) {
      byBlock = new Map()
      for (const entry of contracts) {
        if (entry[1].deployBlock === undefined) continue
        const list = byBlock.get(entry[1].deployBlock) ?? []
        list.push(entry)
        byBlock.set(entry[1].deployBlock, list)
      }
      indexed = contracts.size
    }
    return byBlock.get(block) ?? []
  }
  const rpc = {
    client: undefined,
    async request(method: string, params: unknown[]) {
      if (method === 'eth_call') {
        const call = params[0] as { to: string; data: Hex }
        const contract = contracts.get(call.to.toLowerCase())
        if (!contract) throw new Revert()
        const { functionName, args } = decodeFunctionData({ abi: viewAbi, data: call.data })
        if (functionName === 'name') return encode(contract.name)
        if (functionName === 'symbol') return encode(contract.symbol)
        if (functionName === 'contractURI') return encode(contract.contractUri)
        return encode(contract.tokenUri?.(args[0] as bigint))
      }
      if (method === 'eth_getBlockReceipts') {
        const block = BigInt(params[0] as string)
        return deploymentsIn(block).map(([address, c]) => ({
          contractAddress: address,
          from: c.creator ?? addr('deployer'),
          transactionHash: hash32(`deploy:${address}`),
        }))
      }
      throw new Revert()
    },
    async getCode(address: Hex, block?: bigint) {
      const deployed = contracts.get(address.toLowerCase())?.deployBlock
      return deployed !== undefined && (block === undefined || block >= deployed) ? '0x6080' : '0x'
    },
    async chainId() {
      return 31337
    },
    async blockNumber() {
      return 0n
    },
    async getBlock() {
      return null
    },
    async getLogs() {
      return []
    },
  }
  return rpc as unknown as Rpc
}

const silent = pino({ level: 'silent' })

/**
 * A pool on the test database for filling it fast: the metadata jobs write
 * row by row, and without synchronous_commit every row waits for a WAL flush.
 */
export function fixturePool(url: string): pg.Pool {
  const parsed = new URL(url)
  const options = parsed.searchParams.get('options') ?? ''
  parsed.searchParams.set('options', `${options} -c synchronous_commit=off`.trim())
  return createPool(parsed.toString(), { max: 4 })
}

export function testFetchLimits(): FetchLimits {
  return {
    gateways: { ipfs: 'https://ipfs.invalid/ipfs/', arweave: 'https://arweave.invalid/' },
    allowHosts: new Set(),
    timeoutMs: 1000,
    maxMetadataBytes: 1024 * 1024,
    maxMediaBytes: 5 * 1024 * 1024,
  }
}

export function tempMediaDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'api-media-'))
}

/** A data: URI holding a JSON metadata document. */
export function jsonDataUri(doc: unknown): string {
  return `data:application/json;base64,${Buffer.from(JSON.stringify(doc)).toString('base64')}`
}

/** A small SVG as a data: URI (stored by the media store as image/svg+xml). */
export function svgDataUri(label: string): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><text>${label}</text></svg>`
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`
}

/**
 * A simulated chain that commits through the indexer's commitBatch: one call
 * of `mine` is one indexer batch of consecutive blocks.
 */
export class SimulatedChain {
  head = 0n
  private timestamp: bigint
  private tx = 0
  readonly contracts = new Map<string, FakeContract>()

  constructor(
    readonly pool: pg.Pool,
    readonly options: {
      network?: string
      startBlock?: bigint
      genesisTime?: bigint
      blockTime?: bigint
    } = {},
  ) {
    // The first block mined is START_BLOCK (default 1: block 0 reads as "unknown").
    this.head = (options.startBlock ?? 1n) - 1n
    this.timestamp = options.genesisTime ?? 1_767_225_600n // 2026-01-01T00:00:00Z
  }

  get network() {
    return this.options.network ?? NETWORK
  }

  async init(): Promise<void> {
    await ensureIndexerState(this.pool, {
      network: this.network,
      chainId: 31337,
      startBlock: Number(this.options.startBlock ?? 1n),
    })
  }

  /**
   * Mines `blocks` new blocks; `fill(block, emit)` adds the transfers of each
   * block in log order. Commits them as one indexer batch with the given
   * confirmation depth.
   */
  async mine(
    blocks: number,
    fill: (
      block: bigint,
      /** `amount`: an ERC-1155 id/value pair (TransferSingle) moving that many; absent: an ERC-721 transfer. */
      emit: (t: { collection: Hex; tokenId: bigint; from: Hex; to: Hex; amount?: bigint }) => void,
    ) => void,
    options: { confirmations?: bigint } = {},
  ): Promise<void> {
    const state = await readIndexerState(this.pool, this.network)
    const fromBlock = this.head + 1n
    const events: TransferEvent[] = []
    const rpcBlocks: RpcBlock[] = []
    for (let i = 0; i < blocks; i++) {
      const number = fromBlock + BigInt(i)
      this.timestamp += this.options.blockTime ?? 12n
      let logIndex = 0
      const hash = hash32(`block:${this.network}:${number}`)
      fill(number, (t) => {
        const txHash = hash32(`tx:${this.network}:${this.tx++}`)
        events.push({
          collection: t.collection,
          tokenId: t.tokenId,
          from: t.from,
          to: t.to,
          blockNumber: number,
          blockHash: hash,
          blockTimestamp: this.timestamp,
          transactionHash: txHash,
          logIndex: logIndex++,
          batchIndex: 0,
          standard: t.amount === undefined ? 'ERC721' : 'ERC1155',
          amount: t.amount ?? null,
        })
      })
      rpcBlocks.push({
        number,
        hash,
        parentHash: hash32(`block:${this.network}:${number - 1n}`),
        timestamp: this.timestamp,
      })
    }
    const toBlock = fromBlock + BigInt(blocks) - 1n
    await commitBatch(
      this.pool,
      {
        network: this.network,
        startBlock: this.options.startBlock ?? 1n,
        expectedLastIndexed: state.lastIndexedBlock,
        keepBlocks: 64n,
      },
      {
        fromBlock,
        toBlock,
        transfers: events,
        metadataUpdates: [],
        verified: true,
        blocks: rpcBlocks,
        lastSeenBlock: toBlock,
        chainConfirmedBlock: toBlock - (options.confirmations ?? 0n),
      },
    )
    this.head = toBlock
  }

  /** Runs the indexer's collection job over every pending collection. */
  async describeCollections(): Promise<void> {
    const deps: CollectionJobDeps = {
      pool: this.pool,
      rpc: fakeRpc(this.contracts),
      logger: silent,
      limits: testFetchLimits(),
      multicallEnabled: () => false,
    }
    while ((await processCollections(deps, 500)) > 0) {}
  }

  /**
   * Runs the indexer's token metadata job until the queue is empty: `limits` replace the test
   * defaults (testFetchLimits), `batch` tokens are taken per round.
   */
  async fetchTokenMetadata(
    mediaDir: string,
    options: { limits?: Partial<FetchLimits>; batch?: number } = {},
  ): Promise<void> {
    const deps: TokenJobDeps = {
      pool: this.pool,
      rpc: fakeRpc(this.contracts),
      logger: silent,
      limits: { ...testFetchLimits(), ...options.limits },
      mediaDir,
      multicallEnabled: () => false,
      maxAttempts: 1,
      retryBaseMs: 1000,
      concurrency: 4,
    }
    while ((await processTokens(deps, options.batch ?? 200)) > 0) {}
  }
}
