import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ProviderProxy, startProviderProxy } from '@/test/provider-proxy'
import { createRpc } from '../rpc/client'
import { AdaptiveRange } from '../rpc/get-logs'
import { startTestChain, type TestChain } from '../test/chain'
import { readLogs } from './agreed-logs'
import { normaliseLogs } from './log-set'
import { provenBlock, provenRange } from './proven-logs'

const logger = pino({ level: 'silent' })
let chain: TestChain
let proxy: ProviderProxy
let first: bigint
let last: bigint

beforeAll(async () => {
  chain = await startTestChain()
  const [alice] = chain.accounts
  const nft = (await chain.deploy('TestNFT', ['Proof', 'PRF', 'http://127.0.0.1:9/'])).address
  // One block per mint (automine): ten blocks, each with one Transfer.
  first = await chain.call(nft, 'TestNFT', 'mint', [alice, 1n])
  for (let id = 2n; id <= 10n; id++) last = await chain.call(nft, 'TestNFT', 'mint', [alice, id])
  // A provider's round trip, so that requests sent one after another show up as such.
  proxy = await startProviderProxy({ upstream: chain.anvil.rpcUrl, latencyMs: [20, 30] })
}, 120_000)

afterAll(async () => {
  await proxy?.stop()
  await chain?.stop()
})

/** The logs of blocks [from, to] as a read from anvil itself returns them. */
const readFromNode = async (from: bigint, to: bigint) =>
  normaliseLogs(
    await readLogs(
      { rpc: createRpc({ url: chain.anvil.rpcUrl, logger }), range: new AdaptiveRange(), logger },
      from,
      to,
    ),
  )

describe('receipts proofs', () => {
  it('proves a range of blocks in a round trip per eight blocks, with the logs a read returns', async () => {
    const read = await readFromNode(first, last)
    expect(read).toHaveLength(10)

    const requests = () => proxy.stats().requests ?? 0
    const before = requests()
    const proven = await provenRange({ rpc: createRpc({ url: proxy.url, logger }), logger }, first, last)
    // Ten blocks: headers and receipts of eight blocks in one batch, then of the last two.
    expect(requests() - before).toBe(2)
    expect(proven).toEqual(read)
  })

  it('asks again for a block a lagging node does not have yet, instead of giving up the proof', async () => {
    // Most requests reach a node one or two blocks behind, which answers null for the head block.
    const lagging = await startProviderProxy({
      upstream: chain.anvil.rpcUrl,
      seed: 7,
      faults: { lagging: 0.6, lagBlocks: 2 },
    })
    try {
      const expected = await readFromNode(last, last)
      expect(expected).toHaveLength(1)
      const ctx = { rpc: createRpc({ url: lagging.url, logger }), logger }
      for (let i = 0; i < 5; i++)
        expect(normaliseLogs((await provenBlock(ctx, last)) ?? [])).toEqual(expected)
      expect(lagging.stats().lagging).toBeGreaterThan(0)
    } finally {
      await lagging.stop()
    }
  })
})
