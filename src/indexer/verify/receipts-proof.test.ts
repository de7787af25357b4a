import { type Address, encodeFunctionData, type Hex, toHex, toRlp } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestChain, type TestChain } from '@/indexer/test/chain'
import {
  EMPTY_TRIE_ROOT,
  encodeReceipt,
  provenLogs,
  ReceiptsProofError,
  type RpcReceipt,
  type RpcReceiptLog,
  receiptsRoot,
} from './receipts-proof'

interface RpcHeader {
  hash: Hex
  number: Hex
  receiptsRoot: Hex
  transactions: Hex[]
}

let chain: TestChain
let nft: Address
/** The blocks under test, by the case they cover, with the receipt count each must have. */
const blocks = new Map<string, { number: bigint; receipts: number }>()
/** Trie sizes around the nibble and rlp-key boundaries (16 children; rlp(127) = 0x7f, rlp(128) = 0x8180). */
const SIZES = [2, 16, 17, 128, 129]
/** A busy block: ~200 receipts with ~2,000 logs (its cost is measured by `npm run bench:proof`). */
const BIG = { receipts: 200, logsEach: 10 }

async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(chain.anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = (await response.json()) as { result?: T; error?: { message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result as T
}

const nftData = (functionName: string, args: unknown[]) =>
  encodeFunctionData({ abi: chain.artifacts.TestNFT!.abi, functionName, args })

/** eth_sendTransaction with an explicit gas limit: no estimate against a pending block. */
function send(
  tx: { to: Address; data?: Hex; value?: bigint; gas: bigint } & Record<string, unknown>,
  from = chain.accounts[0]!,
) {
  const { value, gas, ...rest } = tx
  return rpc<Hex>('eth_sendTransaction', [
    { from, ...rest, value: value === undefined ? undefined : toHex(value), gas: toHex(gas) },
  ])
}

/** Mines everything `submit` sends into one block (automine off meanwhile); returns its number. */
async function oneBlock(submit: () => Promise<Hex[]>): Promise<bigint> {
  await rpc('evm_setAutomine', [false])
  let hashes: Hex[]
  try {
    hashes = await submit()
    await rpc('evm_mine')
  } finally {
    await rpc('evm_setAutomine', [true])
  }
  const block = await rpc<RpcHeader>('eth_getBlockByNumber', ['latest', false])
  if ([...block.transactions].sort().join() !== [...hashes].sort().join()) {
    throw new Error(`block ${block.number} does not hold exactly the ${hashes.length} transactions sent`)
  }
  return BigInt(block.number)
}

const cache = new Map<bigint, Promise<{ header: RpcHeader; receipts: RpcReceipt[] }>>()
function fetchBlock(number: bigint) {
  let entry = cache.get(number)
  if (!entry) {
    entry = Promise.all([
      rpc<RpcHeader>('eth_getBlockByNumber', [toHex(number), false]),
      rpc<RpcReceipt[]>('eth_getBlockReceipts', [toHex(number)]),
    ]).then(([header, receipts]) => ({ header, receipts }))
    cache.set(number, entry)
  }
  return entry
}

/** The header as provenLogs takes it. */
const headerOf = (h: RpcHeader) => ({ hash: h.hash, number: BigInt(h.number), receiptsRoot: h.receiptsRoot })
const blockOf = (label: string) => fetchBlock(blocks.get(label)!.number)
/** A deep copy to tamper with. */
const copy = (receipts: RpcReceipt[]): RpcReceipt[] => structuredClone(receipts)

beforeAll(async () => {
  chain = await startTestChain()
  nft = (await chain.deploy('TestNFT', ['Proof Apes', 'PROOF', ''])).address
  // Room for the 200-transaction block (~100M gas); the default limit is 30M.
  await rpc('evm_setBlockGasLimit', [toHex(1_000_000_000n)])
  const [alice, bob] = chain.accounts
  let nextId = 1n

  blocks.set('genesis (no transactions)', { number: 0n, receipts: 0 })
  await rpc('evm_mine')
  blocks.set('a mined block without transactions', { number: await chain.head(), receipts: 0 })
  blocks.set('one transaction', {
    number: await chain.call(nft, 'TestNFT', 'mint', [bob, nextId++]),
    receipts: 1,
  })

  // Legacy, EIP-2930 and EIP-1559 from a dev account; EIP-7702 from a fresh key (it must sign).
  const signer = privateKeyToAccount(generatePrivateKey())
  await rpc('anvil_setBalance', [signer.address, toHex(10n ** 18n)])
  const authorization = await signer.signAuthorization({ chainId: 31337, nonce: 1, address: nft })
  const gasPrice = toHex(2n * BigInt(await rpc<Hex>('eth_gasPrice')))
  const mint = () => ({ to: nft, data: nftData('mint', [bob, nextId++]), gas: 200_000n })
  blocks.set('legacy, EIP-2930, EIP-1559 and EIP-7702 transactions', {
    number: await oneBlock(async () => [
      await send({ ...mint(), type: '0x0', gasPrice }),
      await send({ ...mint(), type: '0x1', gasPrice, accessList: [{ address: nft, storageKeys: [] }] }),
      await send({ ...mint(), type: '0x2', maxFeePerGas: gasPrice, maxPriorityFeePerGas: '0x1' }),
      // The signer runs TestNFT's code as its own: the mint's Transfer comes from the signer.
      await chain.clients.wallet.sendTransaction({
        account: signer,
        chain: chain.clients.chain,
        authorizationList: [authorization],
        to: signer.address,
        data: nftData('mint', [bob, 1n]),
        gas: 300_000n,
      }),
    ]),
    receipts: 4,
  })

  blocks.set('a reverted transaction between two successful ones', {
    number: await oneBlock(async () => [
      await send(mint()),
      await send({ to: nft, data: nftData('burn', [999_999_999n]), gas: 200_000n }), // no such token
      await send(mint()),
    ]),
    receipts: 3,
  })

  blocks.set('hundreds of logs in one transaction', {
    number: await chain.call(nft, 'TestNFT', 'mintBatch', [alice, 10_000n, 300n]),
    receipts: 1,
  })

  for (const size of SIZES) {
    // Mints (topics only), URI updates (a log with data) and plain transfers (no logs).
    const number = await oneBlock(async () => {
      const hashes: Hex[] = []
      for (let i = 0; i < size; i++) {
        const kind = i % 3
        if (kind === 0) hashes.push(await send(mint()))
        else if (kind === 1) {
          const data = nftData('setTokenURI', [BigInt(i), `ipfs://uri/${i}`])
          hashes.push(await send({ to: nft, data, gas: 200_000n }))
        } else hashes.push(await send({ to: bob!, value: 1n, gas: 21_000n }))
      }
      return hashes
    })
    blocks.set(`${size} receipts`, { number, receipts: size })
  }

  const first = 100_000n
  blocks.set('~200 receipts with ~2,000 logs', {
    number: await oneBlock(async () => {
      const hashes: Hex[] = []
      for (let i = 0; i < BIG.receipts; i++) {
        const data = nftData('mintBatch', [alice, first + BigInt(i * BIG.logsEach), BigInt(BIG.logsEach)])
        hashes.push(await send({ to: nft, data, gas: 1_000_000n }))
      }
      return hashes
    }),
    receipts: BIG.receipts,
  })
}, 120_000)

afterAll(async () => {
  await chain?.stop()
})

describe('receiptsRoot rebuilds the header receiptsRoot from eth_getBlockReceipts', () => {
  const labels = [
    'genesis (no transactions)',
    'a mined block without transactions',
    'one transaction',
    'legacy, EIP-2930, EIP-1559 and EIP-7702 transactions',
    'a reverted transaction between two successful ones',
    'hundreds of logs in one transaction',
    ...SIZES.map((size) => `${size} receipts`),
    '~200 receipts with ~2,000 logs',
  ]
  for (const label of labels) {
    it(label, async () => {
      const { header, receipts } = await blockOf(label)
      expect(receipts).toHaveLength(blocks.get(label)!.receipts)
      expect(receiptsRoot(receipts)).toBe(header.receiptsRoot)
      // Input order does not matter: keys come from transactionIndex.
      expect(receiptsRoot([...receipts].reverse())).toBe(header.receiptsRoot)
    })
  }

  it('the blocks cover what they claim to', async () => {
    expect((await blockOf('genesis (no transactions)')).header.receiptsRoot).toBe(EMPTY_TRIE_ROOT)
    const types = (await blockOf('legacy, EIP-2930, EIP-1559 and EIP-7702 transactions')).receipts
    // The node orders them by tip, not by how they were sent.
    expect(types.map((r) => r.type).sort()).toEqual(['0x0', '0x1', '0x2', '0x4'])
    expect(types.every((r) => r.status === '0x1' && r.logs.length === 1)).toBe(true)
    const reverted = (await blockOf('a reverted transaction between two successful ones')).receipts
    expect(reverted.map((r) => r.status)).toEqual(['0x1', '0x0', '0x1'])
    expect((await blockOf('hundreds of logs in one transaction')).receipts[0]!.logs).toHaveLength(300)
    const big = (await blockOf('~200 receipts with ~2,000 logs')).receipts
    expect(big.flatMap((r) => r.logs)).toHaveLength(BIG.receipts * BIG.logsEach)
  })
})

/** The fields eth_getLogs and receipts share (nodes add others, such as removed). */
const logFields = (log: RpcReceiptLog) => ({
  address: log.address,
  topics: log.topics,
  data: log.data,
  logIndex: log.logIndex,
  transactionHash: log.transactionHash,
  transactionIndex: log.transactionIndex,
  blockHash: log.blockHash,
  blockNumber: log.blockNumber,
})

describe('provenLogs', () => {
  it('returns exactly the logs eth_getLogs gives, for every block', async () => {
    let total = 0
    for (const { number } of blocks.values()) {
      const { header, receipts } = await fetchBlock(number)
      const fromGetLogs = await rpc<RpcReceiptLog[]>('eth_getLogs', [{ blockHash: header.hash }])
      const proven = provenLogs(headerOf(header), receipts)
      expect(proven.map(logFields)).toEqual(fromGetLogs.map(logFields))
      // Receipts in any order still give the logs in log-index order.
      expect(provenLogs(headerOf(header), [...receipts].reverse())).toEqual(proven)
      total += proven.length
    }
    expect(total).toBeGreaterThan(2_300)
  })

  describe('rejects tampered receipt lists', () => {
    const reject = async (
      tamper: (receipts: RpcReceipt[]) => void,
      reason: RegExp,
      label = '~200 receipts with ~2,000 logs',
    ) => {
      const { header, receipts } = await blockOf(label)
      const tampered = copy(receipts)
      tamper(tampered)
      expect(() => provenLogs(headerOf(header), tampered)).toThrow(ReceiptsProofError)
      expect(() => provenLogs(headerOf(header), tampered)).toThrow(reason)
    }
    /** Renumbers logIndex so only the root can notice the change. */
    const renumber = (receipts: RpcReceipt[]) => {
      let next = 0
      for (const log of receipts.flatMap((r) => r.logs)) log.logIndex = toHex(next++)
    }

    it('one log removed', () =>
      reject((r) => {
        r[57]!.logs.splice(4, 1)
        renumber(r)
      }, /receipts root mismatch/))

    it('the last log of the block removed', () =>
      reject((r) => r.at(-1)!.logs.pop(), /receipts root mismatch/))

    it("one log's data altered", () =>
      reject(
        (r) => {
          const log = r[1]!.logs[0]! // MetadataUpdate(tokenId): the id is in data
          expect(log.data).toHaveLength(66)
          log.data = `${log.data.slice(0, -1)}${log.data.endsWith('f') ? 'e' : 'f'}` as Hex
        },
        /receipts root mismatch/,
        '129 receipts',
      ))

    it('empty log data replaced by a zero byte', () =>
      reject((r) => {
        r[100]!.logs[3]!.data = '0x00'
      }, /receipts root mismatch/))

    it("one log's topic altered", () =>
      reject((r) => {
        r[0]!.logs[0]!.topics[3] = toHex(424242n, { size: 32 })
      }, /receipts root mismatch/))

    it('a receipt dropped from the middle', () => reject((r) => r.splice(120, 1), /transaction indexes/))

    it('the last receipt dropped', () => reject((r) => r.pop(), /receipts root mismatch/))

    it('all receipts dropped', () => reject((r) => r.splice(0), /receipts root mismatch/))

    it('a receipt swapped for one of another block', async () => {
      const other = copy((await blockOf('129 receipts')).receipts)
      await reject((r) => {
        r[3] = other[3]!
      }, /receipt 3 belongs to another block/)
    })

    it('a receipt of another block relabelled as this block', async () => {
      const other = copy((await blockOf('129 receipts')).receipts)
      await reject((r) => {
        const { blockHash, blockNumber, transactionHash } = r[3]!
        r[3] = { ...other[3]!, blockHash, blockNumber, transactionHash, transactionIndex: '0x3' }
        for (const log of r[3].logs) Object.assign(log, { blockHash, blockNumber, transactionHash })
        for (const log of r[3].logs) log.transactionIndex = '0x3'
        renumber(r)
      }, /receipts root mismatch/)
    })

    it('a status flipped', () =>
      reject((r) => {
        r[10]!.status = '0x0'
      }, /receipts root mismatch/))

    it("a log's logIndex moved (not covered by the root)", () =>
      reject((r) => {
        const [a, b] = r[5]!.logs
        ;[a!.logIndex, b!.logIndex] = [b!.logIndex, a!.logIndex]
      }, /logIndex/))

    it("a log's transactionHash changed (not covered by the root)", () =>
      reject((r) => {
        r[6]!.logs[0]!.transactionHash = r[7]!.transactionHash
      }, /another block or transaction/))

    it('a duplicated receipt', () =>
      reject((r) => {
        r.push(r[0]!)
      }, /belongs to another block|transaction indexes/))
  })
})

describe('encodeReceipt', () => {
  const bloom = toHex(0n, { size: 256 })
  const base: RpcReceipt = {
    status: '0x1',
    cumulativeGasUsed: '0x5208',
    logsBloom: bloom,
    logs: [],
    transactionIndex: '0x0',
    transactionHash: toHex(1n, { size: 32 }),
    blockHash: toHex(2n, { size: 32 }),
    blockNumber: '0x1',
  }
  const body = (statusOrRoot: Hex, gas: Hex = '0x5208') => toRlp([statusOrRoot, gas, bloom, []], 'bytes')

  it('encodes status 1 as 0x01, status 0 as empty bytes, and a pre-Byzantium root as is', () => {
    expect(encodeReceipt(base)).toEqual(body('0x01'))
    expect(encodeReceipt({ ...base, status: '0x0' })).toEqual(body('0x'))
    const root = toHex(7n, { size: 32 })
    expect(encodeReceipt({ ...base, status: undefined, root })).toEqual(body(root))
  })

  it('encodes quantities as minimal big-endian bytes', () => {
    expect(encodeReceipt({ ...base, cumulativeGasUsed: '0x0' })).toEqual(body('0x01', '0x'))
    expect(encodeReceipt({ ...base, cumulativeGasUsed: '0x00ff' })).toEqual(body('0x01', '0xff'))
  })

  it('prefixes typed receipts (0x1-0x4) with their type byte; 0x0 is legacy', () => {
    expect(encodeReceipt({ ...base, type: '0x0' })).toEqual(body('0x01'))
    for (const type of [1, 2, 3, 4]) {
      expect(encodeReceipt({ ...base, type: toHex(type) })).toEqual(new Uint8Array([type, ...body('0x01')]))
    }
  })

  it('refuses what it cannot encode', () => {
    expect(() => encodeReceipt({ ...base, type: '0x7e' })).toThrow(ReceiptsProofError)
    expect(() => encodeReceipt({ ...base, status: undefined })).toThrow(/neither status nor root/)
    expect(() => encodeReceipt({ ...base, status: '0x2' })).toThrow(ReceiptsProofError)
    expect(() => encodeReceipt({ ...base, logsBloom: '0xzz' })).toThrow(ReceiptsProofError)
    expect(() => receiptsRoot([base, base])).toThrow(/duplicate transactionIndex/)
  })
})
