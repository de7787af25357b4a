/** Raw logs for the decoders' tests. */
import { type Hex, numberToHex, pad } from 'viem'
import type { RawLog } from '../chain'

export const A = '0x00000000000000000000000000000000000000aa'
export const B = '0x00000000000000000000000000000000000000bb'
export const ZERO = '0x0000000000000000000000000000000000000000'

/** A 32-byte word: a number, or hex left-padded (an address as a topic). */
export const word = (v: bigint | string) =>
  pad(typeof v === 'bigint' ? numberToHex(v) : (v as Hex), { size: 32 })

/** A log of block 16, log index 3, from a fixed contract. */
export const log = (topics: Hex[], data: Hex = '0x'): RawLog => ({
  address: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  topics,
  data,
  blockNumber: '0x10',
  blockHash: `0x${'ab'.repeat(32)}`,
  transactionHash: `0x${'cd'.repeat(32)}`,
  logIndex: '0x3',
})
