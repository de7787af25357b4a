import { createConfig } from 'ponder'
import { http } from 'viem'

// Everything that describes the chain comes from bench/ponder-run.ts.
const addresses = (process.env.PONDER_ADDRESSES ?? '').split(',').filter(Boolean) as `0x${string}`[]

const transferAbi = [
  {
    type: 'event',
    name: 'Transfer',
    inputs: [
      { name: 'from', type: 'address', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'tokenId', type: 'uint256', indexed: true },
    ],
  },
] as const

export default createConfig({
  database: { kind: 'postgres', connectionString: process.env.DATABASE_URL },
  networks: {
    devnet: {
      chainId: Number(process.env.PONDER_CHAIN_ID ?? 31337),
      // viem 2.5x caps JSON-RPC responses (ResponseBodyTooLargeError); Ponder 1.0.0 predates the cap and
      // does not split a getLogs range on it, so lift it for 500-transfer blocks.
      transport: http(process.env.PONDER_RPC_URL, { maxResponseBodySize: 1024 * 1024 * 1024 }),
      pollingInterval: 500,
      // Local anvil: do not hold Ponder to its public-RPC default of 50 requests/s.
      maxRequestsPerSecond: 10_000,
    },
  },
  contracts: {
    ERC721: {
      network: 'devnet',
      abi: transferAbi,
      address: addresses,
      startBlock: Number(process.env.PONDER_START_BLOCK ?? 0),
      endBlock: process.env.PONDER_END_BLOCK ? Number(process.env.PONDER_END_BLOCK) : undefined,
    },
  },
})
