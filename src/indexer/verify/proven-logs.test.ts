import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ProviderProxy, startProviderProxy } from '@/test/provider-proxy'
import type { RawLog } from '../chain'
import { createRpc } from '../rpc/client'
import { AdaptiveRange } from '../rpc/get-logs'
import { startTestChain, type TestChain } from '../test/chain'
import { startJsonRpcServer } from '../test/http-server'
import { readLogs, readVerifiedLogs } from './agreed-logs'
import { normaliseLogs } from './log-set'
import { MAX_AGREEING, OmissionRate } from './omission-rate'
import { ProofPolicy } from './proof-sample'
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

type RpcCall = { id: number; method: string; params: unknown[] }

/**
 * anvil behind a node whose eth_getLogs answers leave out the log of block `lacking` while
 * `leaveOut(n)` says so for the n-th answer (from 1); everything else passes through.
 */
async function nodeLeavingOut(lacking: bigint, leaveOut: (answer: number) => boolean) {
  let answers = 0
  const forward = async (call: RpcCall) => {
    const res = await fetch(chain.anvil.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(call),
    })
    const answer = (await res.json()) as { result?: unknown }
    if (call.method === 'eth_getLogs' && Array.isArray(answer.result) && leaveOut(++answers))
      answer.result = (answer.result as RawLog[]).filter((l) => BigInt(l.blockNumber) !== lacking)
    return answer
  }
  const server = await startJsonRpcServer<RpcCall | RpcCall[]>(async (body, res) => {
    const answer = Array.isArray(body) ? await Promise.all(body.map(forward)) : await forward(body)
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
  })
  return { url: server.origin, answers: () => answers, close: () => server.close() }
}

describe('a proof holding a log that every read lacked', () => {
  /** Blocks first..last (ten logs: proven, not only read) through `node`, with the sample off. */
  const verify = async (url: string, policy: ProofPolicy) =>
    readVerifiedLogs(
      {
        rpc: createRpc({ url, logger }),
        range: new AdaptiveRange(1_000n),
        logger,
        omissions: new OmissionRate(),
        proofs: policy,
      },
      first,
      last,
    )

  it('is an omission by chance when a later read holds the log: the log index stays trusted', async () => {
    // The two reads at once both leave out block first+3's log; the third holds it.
    const node = await nodeLeavingOut(first + 3n, (n) => n <= 2)
    try {
      const policy = new ProofPolicy({ rate: 0 })
      const verified = await verify(node.url, policy)
      expect(verified.logs).toEqual(await readFromNode(first, last))
      expect(policy.untrusted).toBe(false)
      expect(node.answers()).toBe(3)
    } finally {
      await node.close()
    }
  })

  it('is a log index that lacks it when enough reads lack it: every block is proven from then on', async () => {
    const node = await nodeLeavingOut(first + 3n, () => true)
    try {
      const policy = new ProofPolicy({ rate: 0 })
      const verified = await verify(node.url, policy)
      expect(verified).toMatchObject({ method: 'receipts_proof' })
      expect(verified.logs).toEqual(await readFromNode(first, last))
      expect(policy.untrusted).toBe(true)
      // Both first answers lacked a log: a provider dropping logs that often is read the
      // most times before chance is ruled out (readsNeeded).
      expect(node.answers()).toBe(MAX_AGREEING)
      // Once not trusted, nothing is read: every block is proven.
      await verify(node.url, policy)
      expect(node.answers()).toBe(MAX_AGREEING)
    } finally {
      await node.close()
    }
  })
})
