import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ProviderProxy, startProviderProxy } from '@/test/provider-proxy'
import type { RpcBlock } from '../chain'
import { CONSECUTIVE_TRANSFER_TOPIC, INDEXED_TOPICS, TRANSFER_TOPIC } from '../events/topics'
import { startTestChain, type TestChain } from '../test/chain'
import { createRpc } from './client'
import { readBlockLogs } from './get-logs'
import { bloomMayHold } from './logs-bloom'

let chain: TestChain
let proxy: ProviderProxy
/** A block with one mint of 3 tokens (3 Transfer logs), and one without any transaction. */
let mintBlock: RpcBlock
let emptyBlock: RpcBlock

const logger = pino({ level: 'silent' })

beforeAll(async () => {
  chain = await startTestChain()
  const nft = (await chain.deploy('TestNFT', ['Bloom', 'BLM', ''])).address
  const minted = await chain.call(nft, 'TestNFT', 'mintBatch', [chain.accounts[0], 1n, 3n])
  await chain.clients.test.mine({ blocks: 1 })
  // A node that does not have a block answers its logs by hash with none, and no error.
  proxy = await startProviderProxy({ upstream: chain.anvil.rpcUrl, emptyForUnknownHash: true })
  const rpc = createRpc({ url: chain.anvil.rpcUrl, logger })
  mintBlock = (await rpc.getBlock(minted))!
  emptyBlock = (await rpc.getBlock(minted + 1n))!
}, 120_000)

afterAll(async () => {
  await proxy?.stop()
  await chain?.stop()
})

describe('logs bloom', () => {
  it('names the events a block holds, and none of a block without logs', () => {
    expect(mintBlock.logsBloom).toMatch(/^0x[0-9a-f]{512}$/)
    expect(bloomMayHold(mintBlock.logsBloom!, [TRANSFER_TOPIC])).toBe(true)
    expect(bloomMayHold(mintBlock.logsBloom!, INDEXED_TOPICS[0]!)).toBe(true)
    expect(bloomMayHold(mintBlock.logsBloom!, [CONSECUTIVE_TRANSFER_TOPIC])).toBe(false)
    expect(bloomMayHold(mintBlock.logsBloom!, [])).toBe(true)
    expect(bloomMayHold(emptyBlock.logsBloom!, [TRANSFER_TOPIC])).toBe(false)
    expect(bloomMayHold(emptyBlock.logsBloom!, [])).toBe(false)
  })

  it('reads a block by hash again while a node without it answers no logs that its bloom names', async () => {
    const rpc = createRpc({ url: proxy.url, logger })
    // Every request reaches a node five blocks behind, until the lag clears after 300 ms.
    proxy.setFaults({ lagging: 1, lagBlocks: 5 })
    setTimeout(() => proxy.setFaults({ lagging: 0 }), 300)
    const before = proxy.stats()['method.eth_getLogs'] ?? 0
    const logs = await readBlockLogs(rpc, mintBlock, INDEXED_TOPICS)
    expect(logs).toHaveLength(3)
    expect((proxy.stats()['method.eth_getLogs'] ?? 0) - before).toBeGreaterThan(1)
  })

  it('takes an empty answer at once for a block whose bloom names none of the events', async () => {
    const rpc = createRpc({ url: proxy.url, logger })
    proxy.setFaults({ lagging: 1, lagBlocks: 5 })
    const before = proxy.stats()['method.eth_getLogs'] ?? 0
    expect(await readBlockLogs(rpc, emptyBlock, INDEXED_TOPICS)).toEqual([])
    expect((proxy.stats()['method.eth_getLogs'] ?? 0) - before).toBe(1)
    proxy.setFaults({ lagging: 0 })
  })
})
