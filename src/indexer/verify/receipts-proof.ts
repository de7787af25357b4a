/**
 * Proves a block's complete log list from its receipts. eth_getLogs can silently
 * miss a log; eth_getBlockReceipts gives every receipt of a block, and rebuilding
 * the receipts trie from them and matching the header's receiptsRoot shows that
 * nothing was left out or changed. Pure and synchronous: the caller fetches.
 *
 * What the root does not cover: the header itself (the caller trusts its hash),
 * transaction hashes (those sit in the transactions trie) and the positional
 * fields of logs (logIndex, blockHash, …), which provenLogs checks for consistency.
 */
import { type Hex, hexToBytes, keccak256, toRlp } from 'viem'
import { IndexerError } from '../errors'

/** A receipt as eth_getBlockReceipts returns it (hex quantities). */
export interface RpcReceipt {
  type?: Hex
  status?: Hex
  root?: Hex
  cumulativeGasUsed: Hex
  logsBloom: Hex
  logs: RpcReceiptLog[]
  transactionIndex: Hex
  transactionHash: Hex
  blockHash: Hex
  blockNumber: Hex
}

export interface RpcReceiptLog {
  address: Hex
  topics: Hex[]
  data: Hex
  logIndex: Hex
  transactionHash: Hex
  blockHash: Hex
  blockNumber: Hex
  transactionIndex?: Hex
}

export class ReceiptsProofError extends IndexerError {
  constructor(shortMessage: string, options: { cause?: unknown } = {}) {
    super(shortMessage, options)
    this.name = 'ReceiptsProofError'
  }
}

/** keccak256(rlp('')): the root of a block without transactions. */
export const EMPTY_TRIE_ROOT: Hex = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421'

type RlpItem = Uint8Array | readonly RlpItem[]

const EMPTY = new Uint8Array(0)
/** Legacy (0x0) has no prefix; 0x1 access list, 0x2 dynamic fee, 0x3 blob, 0x4 set-code. */
const TYPED_RECEIPTS = new Set([1, 2, 3, 4])

/**
 * EIP-2718 consensus encoding of one receipt: legacy = rlp([statusOrRoot, cumulativeGasUsed,
 * logsBloom, logs]); typed = type byte || rlp(...). Logs are rlp([address, topics[], data]).
 */
export function encodeReceipt(r: RpcReceipt): Uint8Array {
  const type = r.type == null ? 0 : Number(quantity(r.type, 'type'))
  if (type !== 0 && !TYPED_RECEIPTS.has(type)) {
    // Other types (rollup deposits and the like) encode extra fields: not provable here.
    throw new ReceiptsProofError(`unsupported receipt type ${r.type}`)
  }
  let body: Uint8Array
  try {
    body = toRlp(
      [
        statusOrRoot(r),
        quantityBytes(r.cumulativeGasUsed, 'cumulativeGasUsed'),
        hexToBytes(r.logsBloom),
        r.logs.map((log) => [
          hexToBytes(log.address),
          log.topics.map((t) => hexToBytes(t)),
          hexToBytes(log.data),
        ]),
      ],
      'bytes',
    )
  } catch (error) {
    if (error instanceof ReceiptsProofError) throw error
    throw new ReceiptsProofError(`malformed receipt ${r.transactionIndex}`, { cause: error })
  }
  if (type === 0) return body
  const typed = new Uint8Array(body.length + 1)
  typed[0] = type
  typed.set(body, 1)
  return typed
}

/**
 * Root of the trie keyed by rlp(transactionIndex) with the encoded receipts as values; the
 * empty trie's root is keccak256(rlp('')). Keys come from each receipt's transactionIndex,
 * so the order of `receipts` does not matter.
 */
export function receiptsRoot(receipts: RpcReceipt[]): Hex {
  if (receipts.length === 0) return EMPTY_TRIE_ROOT
  const seen = new Set<bigint>()
  const entries: Entry[] = receipts.map((receipt) => {
    const index = quantity(receipt.transactionIndex, 'transactionIndex')
    if (seen.has(index)) throw new ReceiptsProofError(`duplicate transactionIndex ${index}`)
    seen.add(index)
    return {
      key: nibbles(toRlp(quantityBytes(receipt.transactionIndex, 'transactionIndex'), 'bytes')),
      value: encodeReceipt(receipt),
    }
  })
  // The root is hashed even when its encoding is shorter than 32 bytes.
  return keccak256(toRlp(trieNode(entries, 0), 'bytes'))
}

/**
 * Checks receipts against a header: every receipt names this block (hash and number), indexes
 * are 0..n-1, the root matches, and the logs' positional fields agree with the receipts. Returns
 * the block's logs in log-index order, or throws ReceiptsProofError with a short reason.
 */
export function provenLogs(
  header: { hash: Hex; number: bigint; receiptsRoot: Hex },
  receipts: RpcReceipt[],
): RpcReceiptLog[] {
  const blockHash = header.hash.toLowerCase()
  const sameBlock = (item: { blockHash: Hex; blockNumber: Hex }) =>
    item.blockHash?.toLowerCase() === blockHash && quantity(item.blockNumber, 'blockNumber') === header.number

  const ordered = receipts
    .map((receipt) => ({ receipt, index: quantity(receipt.transactionIndex, 'transactionIndex') }))
    .sort((a, b) => (a.index < b.index ? -1 : a.index > b.index ? 1 : 0))
  for (const [position, { receipt, index }] of ordered.entries()) {
    if (!sameBlock(receipt)) throw new ReceiptsProofError(`receipt ${index} belongs to another block`)
    if (index !== BigInt(position)) {
      throw new ReceiptsProofError(
        `transaction indexes are not 0..${receipts.length - 1} (position ${position} holds ${index})`,
      )
    }
  }

  const root = receiptsRoot(ordered.map((o) => o.receipt))
  if (root !== header.receiptsRoot.toLowerCase()) {
    throw new ReceiptsProofError(
      `receipts root mismatch: computed ${root}, header has ${header.receiptsRoot}`,
    )
  }

  // The root proves address, topics and data; a log's position in the block is its logIndex,
  // so the fields the indexer keys on must agree with that position too.
  const logs: RpcReceiptLog[] = []
  for (const { receipt, index } of ordered) {
    const txHash = receipt.transactionHash.toLowerCase()
    for (const log of receipt.logs) {
      const at = logs.length
      if (quantity(log.logIndex, 'logIndex') !== BigInt(at)) {
        throw new ReceiptsProofError(`log ${at} has logIndex ${log.logIndex}`)
      }
      if (!sameBlock(log) || log.transactionHash?.toLowerCase() !== txHash) {
        throw new ReceiptsProofError(`log ${at} names another block or transaction than its receipt`)
      }
      if (log.transactionIndex != null && quantity(log.transactionIndex, 'transactionIndex') !== index) {
        throw new ReceiptsProofError(`log ${at} names transaction ${log.transactionIndex}, not ${index}`)
      }
      logs.push(log)
    }
  }
  return logs
}

// --- Ordered Merkle-Patricia trie ------------------------------------------------------------

interface Entry {
  /** The key as nibbles. */
  key: Uint8Array
  value: Uint8Array
}

/** The node holding `entries`, all of which share their first `depth` nibbles. */
function trieNode(entries: Entry[], depth: number): RlpItem {
  if (entries.length === 1) {
    const only = entries[0]!
    return [hexPrefix(only.key.subarray(depth), true), only.value]
  }
  const shared = sharedPrefixLength(entries, depth)
  if (shared > 0) {
    const path = entries[0]!.key.subarray(depth, depth + shared)
    return [hexPrefix(path, false), childRef(trieNode(entries, depth + shared))]
  }
  const slots: Entry[][] = Array.from({ length: 16 }, () => [])
  let value: Uint8Array = EMPTY
  for (const entry of entries) {
    // rlp keys are prefix-free, so a key ending here cannot happen; kept for a general trie.
    if (entry.key.length === depth) value = entry.value
    else slots[entry.key[depth]!]!.push(entry)
  }
  return [...slots.map((slot) => (slot.length === 0 ? EMPTY : childRef(trieNode(slot, depth + 1)))), value]
}

/** Children under 32 bytes are embedded as they are; larger ones by their hash. */
function childRef(node: RlpItem): RlpItem {
  const encoded = toRlp(node, 'bytes')
  return encoded.length < 32 ? node : keccak256(encoded, 'bytes')
}

function sharedPrefixLength(entries: Entry[], depth: number): number {
  const first = entries[0]!.key
  let end = first.length
  for (const { key } of entries) {
    end = Math.min(end, key.length)
    for (let i = depth; i < end; i++) {
      if (key[i] !== first[i]) {
        end = i
        break
      }
    }
  }
  return end - depth
}

/** Hex-prefix encoding: flag nibble (2 = leaf, +1 = odd length), padded to whole bytes. */
function hexPrefix(path: Uint8Array, leaf: boolean): Uint8Array {
  const odd = path.length % 2
  const out = new Uint8Array(1 + (path.length >> 1))
  out[0] = ((leaf ? 2 : 0) + odd) << 4
  let i = 0
  if (odd) out[0] |= path[i++]!
  for (let o = 1; i < path.length; i += 2, o++) out[o] = (path[i]! << 4) | path[i + 1]!
  return out
}

function nibbles(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length * 2)
  for (let i = 0; i < bytes.length; i++) {
    out[2 * i] = bytes[i]! >> 4
    out[2 * i + 1] = bytes[i]! & 0x0f
  }
  return out
}

// --- Field encodings -------------------------------------------------------------------------

/** Post-Byzantium: status 1 → 0x01, 0 → empty; before it, the 32-byte intermediate state root. */
function statusOrRoot(r: RpcReceipt): Uint8Array {
  if (r.root != null && r.root !== '0x') {
    const root = hexToBytes(r.root)
    if (root.length !== 32) throw new ReceiptsProofError(`receipt ${r.transactionIndex} has a malformed root`)
    return root
  }
  if (r.status == null)
    throw new ReceiptsProofError(`receipt ${r.transactionIndex} has neither status nor root`)
  const status = quantity(r.status, 'status')
  if (status > 1n) throw new ReceiptsProofError(`receipt ${r.transactionIndex} has status ${r.status}`)
  return status === 1n ? new Uint8Array([1]) : EMPTY
}

function quantity(value: Hex | undefined, field: string): bigint {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]+$/.test(value)) {
    throw new ReceiptsProofError(`malformed ${field}: ${String(value)}`)
  }
  return BigInt(value)
}

/** Minimal big-endian bytes, as RLP wants quantities (0 → empty). */
function quantityBytes(value: Hex, field: string): Uint8Array {
  const n = quantity(value, field)
  if (n === 0n) return EMPTY
  const hex = n.toString(16)
  return hexToBytes(`0x${hex.length % 2 ? '0' : ''}${hex}`)
}
