import { createConfig } from 'ponder'
import { http } from 'viem'

// The ERC-1155 app of bench:indexer:1155; everything that describes the chain comes from
// bench/ponder-run.ts, as for the ERC-721 app in bench/ponder.
const addresses = (process.env.PONDER_ADDRESSES ?? '').split(',').filter(Boolean) as `0x${string}`[]

const erc1155Abi = [
  {
    type: 'event',
    name: 'TransferSingle',
    inputs: [
      { name: 'operator', type: 'address', indexed: true },
      { name: 'from', type: 'address', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'id', type: 'uint256', indexed: false },
      { name: 'value', type: 'uint256', indexed: false },
    ],
  },
  {
    type: 'event',
    name: 'TransferBatch',
    inputs: [
      { name: 'operator', type: 'address', indexed: true },
      { name: 'from', type: 'address', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'ids', type: 'uint256[]', indexed: false },
      { name: 'values', type: 'uint256[]', indexed: false },
    ],
  },
] as const

export default createConfig({
  database: { kind: 'postgres', connectionString: process.env.DATABASE_URL },
  networks: {
    devnet: {
      chainId: Number(process.env.PONDER_CHAIN_ID ?? 31337),
      // As in ../ponder.config.ts: lift viem's response cap for blocks of many logs.
      transport: http(process.env.PONDER_RPC_URL, { maxResponseBodySize: 1024 * 1024 * 1024 }),
      pollingInterval: 500,
      maxRequestsPerSecond: 10_000,
    },
  },
  contracts: {
    ERC1155: {
      network: 'devnet',
      abi: erc1155Abi,
      address: addresses,
      startBlock: Number(process.env.PONDER_START_BLOCK ?? 0),
      endBlock: process.env.PONDER_END_BLOCK ? Number(process.env.PONDER_END_BLOCK) : undefined,
    },
  },
})
