import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import type { RawLog } from '../chain'
import { createRpc } from '../rpc/client'
import { AdaptiveRange } from '../rpc/get-logs'
import { startJsonRpcServer, type TestServer } from '../test/http-server'
import { readAgreedLogs, readVerifiedLogs } from './agreed-logs'
import { LEARNING_ANSWERS, OmissionRate } from './omission-rate'
import { ProofPolicy } from './proof-sample'

type Item = { id: number; method: string }

/**
 * A node without eth_getBlockReceipts whose eth_getLogs answers hold `logs` logs (2 per
 * block from block 0), the n-th answer (from 1) leaving out the logs `omit(n)` names.
 * With `twins`, each block's two logs are one transaction's one log emitted twice.
 */
async function scriptedNode(logs: number, omit: (answer: number) => number[], twins = false) {
  let answers = 0
  const all: RawLog[] = Array.from({ length: logs }, (_, i) => ({
    blockNumber: `0x${Math.floor(i / 2).toString(16)}`,
    blockHash: `0x${Math.floor(i / 2)
      .toString(16)
      .padStart(64, '0')}`,
    transactionHash: `0x${(twins ? Math.floor(i / 2) : i).toString(16).padStart(64, '0')}`,
    logIndex: `0x${(i % 2).toString(16)}`,
    address: '0x00000000000000000000000000000000000000aa',
    topics: [],
    data: '0x',
  }))
  const answer = (r: Item) => {
    if (r.method !== 'eth_getLogs')
      return { jsonrpc: '2.0', id: r.id, error: { code: -32601, message: 'the method does not exist' } }
    const left = new Set(omit(++answers))
    return { jsonrpc: '2.0', id: r.id, result: all.filter((_, i) => !left.has(i)) }
  }
  const server = await startJsonRpcServer<Item | Item[]>((body, res) =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body))),
  )
  servers.push(server)
  return { url: server.origin, answers: () => answers, all }
}

const servers: TestServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const logger = pino({ level: 'silent' })
const read = (url: string, logs: number, omissions: OmissionRate) =>
  readVerifiedLogs(
    { rpc: createRpc({ url, logger }), range: new AdaptiveRange(1_000n), logger, omissions },
    0n,
    BigInt(Math.ceil(logs / 2) - 1),
  ).then((verified) => verified.logs)

describe('verified reads', () => {
  /** An omission rate that has counted enough clean answers to plan with one in a hundred. */
  const seenClean = () => {
    const omissions = new OmissionRate()
    omissions.record(LEARNING_ANSWERS, 0)
    return omissions
  }

  it('settle on two identical reads of a dense range from a node seen not leaving logs out', async () => {
    const node = await scriptedNode(40, () => [])
    expect(await read(node.url, 40, seenClean())).toHaveLength(40)
    expect(node.answers()).toBe(2)
  })

  it('take three reads of the same range from a node not seen yet', async () => {
    const node = await scriptedNode(40, () => [])
    expect(await read(node.url, 40, new OmissionRate())).toHaveLength(40)
    expect(node.answers()).toBe(3)
  })

  it('take three reads of a range with few logs', async () => {
    const node = await scriptedNode(4, () => [])
    expect(await read(node.url, 4, seenClean())).toHaveLength(4)
    expect(node.answers()).toBe(3)
  })

  it('from a node seen leaving logs out, do not settle on two reads that left out the same log', async () => {
    // Answers 1 and 2 both lack log 7: two identical reads of 39 logs where the chain has 40.
    const node = await scriptedNode(40, (n) => (n <= 2 ? [7] : []))
    const omissions = new OmissionRate()
    omissions.record(9, 3)
    const logs = await read(node.url, 40, omissions)
    expect(logs).toHaveLength(40)
    expect(node.answers()).toBeGreaterThan(2)
  })

  it('do not settle on reads cut short of a block whose only log every answer by hash leaves out', async () => {
    // Blocks 0..9 hold two logs each, block 10 one; the head is 12. The first two range answers
    // stop at block 9 (a node behind the head), and every answer by hash leaves a log out, so
    // block 10 comes back empty by hash although its bloom names logs.
    const logOf = (b: number, i: number): RawLog => ({
      blockNumber: `0x${b.toString(16)}`,
      blockHash: `0x${b.toString(16).padStart(64, '0')}`,
      transactionHash: `0x${(b * 2 + i).toString(16).padStart(64, '0')}`,
      logIndex: `0x${i.toString(16)}`,
      address: '0x00000000000000000000000000000000000000aa',
      topics: [],
      data: '0x',
    })
    const logsOf = (b: number) => (b <= 9 ? [logOf(b, 0), logOf(b, 1)] : b === 10 ? [logOf(b, 0)] : [])
    let rangeAnswers = 0
    type Call = Item & { params: [unknown, ...unknown[]] }
    const answer = ({ id, method, params }: Call) => {
      if (method === 'eth_getBlockByNumber') {
        const n = Number(params[0])
        const hash = (b: number) => `0x${b.toString(16).padStart(64, '0')}`
        const bloom = `0x${(logsOf(n).length > 0 ? 'ff' : '00').repeat(256)}`
        const block = {
          number: `0x${n.toString(16)}`,
          hash: hash(n),
          parentHash: hash(n - 1),
          timestamp: '0x1',
        }
        return { jsonrpc: '2.0', id, result: n <= 12 ? { ...block, logsBloom: bloom } : null }
      }
      if (method !== 'eth_getLogs')
        return { jsonrpc: '2.0', id, error: { code: -32601, message: 'the method does not exist' } }
      const filter = params[0] as { fromBlock?: string; toBlock?: string; blockHash?: string }
      if (filter.blockHash) return { jsonrpc: '2.0', id, result: logsOf(Number(filter.blockHash)).slice(1) }
      const to = ++rangeAnswers <= 2 ? 9 : Number(filter.toBlock)
      const result: RawLog[] = []
      for (let b = Number(filter.fromBlock); b <= to; b++) result.push(...logsOf(b))
      return { jsonrpc: '2.0', id, result }
    }
    const server = await startJsonRpcServer<Call | Call[]>((body, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body))),
    )
    servers.push(server)
    const rpc = createRpc({ url: server.origin, logger })
    rpc.pool.endpoints[0]!.observeHead(12n)
    rpc.pool.endpoints[0]!.takeServedHead(12n)
    const verified = await readVerifiedLogs(
      { rpc, range: new AdaptiveRange(1_000n), logger, omissions: seenClean() },
      0n,
      10n,
    )
    expect(verified.logs.map((l) => Number(l.blockNumber))).toContain(10)
    expect(verified.logs).toHaveLength(21)
  }, 20_000)

  it('name the method they used: reads of one endpoint, no proof, where the node has no receipts', async () => {
    const node = await scriptedNode(40, () => [])
    const verified = await readVerifiedLogs(
      {
        rpc: createRpc({ url: node.url, logger }),
        range: new AdaptiveRange(1_000n),
        logger,
        omissions: seenClean(),
        proofs: new ProofPolicy({ rate: 1 }),
      },
      0n,
      19n,
    )
    expect(verified).toMatchObject({ method: 'repeated_reads', sampleRate: null })
    expect(verified.logs).toHaveLength(40)
  })

  it('learn the omission rate from the reads they settle', async () => {
    // Every third answer leaves a log out.
    const node = await scriptedNode(40, (n) => (n % 3 === 0 ? [n % 40] : []))
    const omissions = new OmissionRate()
    for (let i = 0; i < 4; i++) expect(await read(node.url, 40, omissions)).toHaveLength(40)
    expect(omissions.estimate()).toBeGreaterThan(0.1)
    expect(omissions.readsNeeded(40)).toBeGreaterThan(2)
  })
})

describe('a kept read (the one stored rows of blocks followed at the head were committed from)', () => {
  /** Settles blocks 0..19 of `node` with `kept` as the first read; the warnings logged meanwhile. */
  const settle = async (node: Awaited<ReturnType<typeof scriptedNode>>, kept: RawLog[]) => {
    const warnings: string[] = []
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) })
    const omissions = new OmissionRate()
    omissions.record(LEARNING_ANSWERS, 0)
    const logs = await readAgreedLogs(
      { rpc: createRpc({ url: node.url, logger }), range: new AdaptiveRange(1_000n), logger, omissions },
      0n,
      19n,
      [],
      new Set(),
      new Set(),
      kept,
    )
    return { logs, warnings }
  }

  it('that tells a log at another, free index of its block is set aside, and fresh reads settle', async () => {
    const node = await scriptedNode(40, () => [])
    // Block 2's second log (index 1) told at index 7, where the block has no log: no two logs
    // meet at one position, and no fresh read ever holds the one at index 7. Before, the union
    // of the reads never settled (twelve reads, then again after a back-off, until a restart).
    const kept = node.all.map((log, i) => (i === 5 ? { ...log, logIndex: '0x7' as const } : log))
    const { logs, warnings } = await settle(node, kept)
    expect(logs).toEqual(node.all)
    expect(warnings).toEqual([
      expect.stringContaining('conflicts with a later read (one log at index 7 and at index 1 of block 2)'),
    ])
  })

  it('that lacks one of a log emitted twice by one transaction counts, and is not set aside', async () => {
    // Each block's two logs: one transaction's one log, twice (indexes 0 and 1). The kept read
    // lacks block 3's first: an omission, which the fresh reads fill in, not a log moved.
    const node = await scriptedNode(40, () => [], true)
    const { logs, warnings } = await settle(
      node,
      node.all.filter((_, i) => i !== 6),
    )
    expect(logs).toEqual(node.all)
    expect(warnings).toEqual([])
  })
})
