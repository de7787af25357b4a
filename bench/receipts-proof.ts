/**
 * `npm run bench:proof`: what proving a block's logs from its receipts costs
 * (docs/indexer.md, "Verification"). On a local anvil chain, one block of
 * BENCH_PROOF_RECEIPTS transactions of BENCH_PROOF_LOGS mints each (~200
 * receipts with ~2,000 logs by default, a busy mainnet block); then
 * `receiptsRoot` (the trie rebuilt from eth_getBlockReceipts) and
 * `provenLogs` (the root compared with the header's, the logs taken out) are
 * timed over BENCH_ROUNDS rounds of BENCH_RUNS blocks each, after a warm-up.
 * Prints milliseconds per block, the median round first.
 */
import { encodeFunctionData, type Hex, toHex } from 'viem'
import { startTestChain } from '@/indexer/test/chain'
import { provenLogs, type RpcReceipt, receiptsRoot } from '@/indexer/verify/receipts-proof'

const RECEIPTS = Number(process.env.BENCH_PROOF_RECEIPTS ?? 200)
const LOGS_EACH = Number(process.env.BENCH_PROOF_LOGS ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const RUNS = Number(process.env.BENCH_RUNS ?? 10)

interface RpcHeader {
  hash: Hex
  number: Hex
  receiptsRoot: Hex
}

async function main() {
  const chain = await startTestChain()
  try {
    const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
      const response = await fetch(chain.anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      })
      const body = (await response.json()) as { result?: T; error?: { message: string } }
      if (body.error) throw new Error(`${method}: ${body.error.message}`)
      return body.result as T
    }
    const nft = (await chain.deploy('TestNFT', ['Proof Apes', 'PROOF', ''])).address
    await rpc('evm_setBlockGasLimit', [toHex(1_000_000_000n)])
    // Every transaction into one block: automine off while they are sent.
    await rpc('evm_setAutomine', [false])
    for (let i = 0; i < RECEIPTS; i++) {
      const data = encodeFunctionData({
        abi: chain.artifacts.TestNFT!.abi,
        functionName: 'mintBatch',
        args: [chain.accounts[0], BigInt(1 + i * LOGS_EACH), BigInt(LOGS_EACH)],
      })
      await rpc('eth_sendTransaction', [{ from: chain.accounts[0], to: nft, data, gas: toHex(1_000_000n) }])
    }
    await rpc('evm_mine')
    await rpc('evm_setAutomine', [true])
    const header = await rpc<RpcHeader>('eth_getBlockByNumber', ['latest', false])
    const receipts = await rpc<RpcReceipt[]>('eth_getBlockReceipts', [header.number])
    const logs = receipts.reduce((n, r) => n + r.logs.length, 0)
    const block = { hash: header.hash, number: BigInt(header.number), receiptsRoot: header.receiptsRoot }

    const perBlock = (work: () => unknown) => {
      for (let i = 0; i < 5; i++) work() // warm up the JIT
      const rounds: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        const start = performance.now()
        for (let i = 0; i < RUNS; i++) work()
        rounds.push((performance.now() - start) / RUNS)
      }
      const sorted = [...rounds].sort((a, b) => a - b)
      return `${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} ms (rounds ${rounds.map((r) => r.toFixed(2)).join(', ')})`
    }
    console.log(`block ${BigInt(header.number)}: ${receipts.length} receipts, ${logs} logs`)
    console.log(`receiptsRoot  ${perBlock(() => receiptsRoot(receipts))} per block`)
    console.log(`provenLogs    ${perBlock(() => provenLogs(block, receipts))} per block`)
  } finally {
    await chain.stop()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
