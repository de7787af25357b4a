import { decodeFunctionResult, encodeFunctionData, type Hex, parseAbi } from 'viem'
import type { Rpc } from '../rpc/client'
import { isTransientRpcError } from '../rpc/client'
import { cleanValueText } from './normalize'
import { FetchFailure } from './outcome'

export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11'

const tokenAbi = parseAbi([
  'function tokenURI(uint256) view returns (string)',
  'function uri(uint256) view returns (string)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function contractURI() view returns (string)',
])
const multicallAbi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
])

export interface ViewCall {
  to: Hex
  data: Hex
}

/** Raw result of one view call: its return data, or null when it reverted. */
export type CallResult = Hex | null

/** Multicall3 is used when its code exists at the canonical address on this chain. */
export async function hasMulticall3(rpc: Rpc): Promise<boolean> {
  const code = await rpc.getCode(MULTICALL3_ADDRESS)
  return code !== '0x' && code.length > 2
}

/**
 * Runs many view calls at once: through Multicall3's aggregate3 (failures
 * allowed per call) when deployed, else as plain eth_calls that the transport
 * sends as JSON-RPC batches. Transient RPC errors throw; reverts give null.
 */
export async function batchViewCalls(
  rpc: Rpc,
  calls: ViewCall[],
  multicallEnabled: boolean,
): Promise<CallResult[]> {
  if (calls.length === 0) return []
  if (multicallEnabled) {
    try {
      return await viaMulticall(rpc, calls)
    } catch (err) {
      // A whole aggregate can fail (gas cap of heavy on-chain renderers): fall back per call.
      if (isTransientRpcError(err)) throw err
    }
  }
  return Promise.all(
    calls.map(async (call) => {
      try {
        return await rpc.request<Hex>('eth_call', [call, 'latest'], { label: 'eth_call view' })
      } catch (err) {
        if (isTransientRpcError(err)) throw err
        return null
      }
    }),
  )
}

async function viaMulticall(rpc: Rpc, calls: ViewCall[]): Promise<CallResult[]> {
  const data = encodeFunctionData({
    abi: multicallAbi,
    functionName: 'aggregate3',
    args: [calls.map((c) => ({ target: c.to, allowFailure: true, callData: c.data }))],
  })
  const raw = await rpc.request<Hex>('eth_call', [{ to: MULTICALL3_ADDRESS, data }, 'latest'], {
    label: 'multicall3',
  })
  const results = decodeFunctionResult({ abi: multicallAbi, functionName: 'aggregate3', data: raw })
  return results.map((r) => (r.success ? r.returnData : null))
}

export const encodeTokenUri = (tokenId: bigint) =>
  encodeFunctionData({ abi: tokenAbi, functionName: 'tokenURI', args: [tokenId] })
/** ERC-1155's metadata URI function: `uri(uint256)`, a template that may hold `{id}` (expandIdPlaceholder). */
export const encodeErc1155Uri = (tokenId: bigint) =>
  encodeFunctionData({ abi: tokenAbi, functionName: 'uri', args: [tokenId] })
export const encodeNoArg = (fn: 'name' | 'symbol' | 'contractURI') =>
  encodeFunctionData({ abi: tokenAbi, functionName: fn })

/** The string a view function returned, or the failure it stands for (`fn` names it in messages). */
export function decodeUriResult(result: CallResult, maxChars: number, fn = 'tokenURI'): string {
  if (result === null || result === '0x')
    throw new FetchFailure('uri_reverted', `${fn} reverted or is missing`)
  if ((result.length - 2) / 2 > maxChars + 96)
    throw new FetchFailure('too_large', `${fn} exceeds ${maxChars} bytes`)
  let uri: string
  try {
    uri = decodeFunctionResult({ abi: tokenAbi, functionName: 'tokenURI', data: result })
  } catch (err) {
    throw new FetchFailure('invalid_uri', `${fn} returned data that is not an ABI string`, false, err)
  }
  if (uri.length > maxChars) throw new FetchFailure('too_large', `${fn} exceeds ${maxChars} bytes`)
  return uri
}

/**
 * EIP-1155 "Metadata": every `{id}` in an ERC-1155 URI stands for the token id
 * as 64 lowercase hex digits, zero-padded, without 0x (docs/metadata.md, "ERC-1155").
 */
export function expandIdPlaceholder(uri: string, tokenId: bigint): string {
  if (!uri.includes('{id}')) return uri
  return uri.replaceAll('{id}', tokenId.toString(16).padStart(64, '0'))
}

/**
 * Strings of name()/symbol(): ABI strings, or bytes32 from pre-standard
 * contracts (trailing NULs trimmed). '' when missing, reverted or garbage.
 */
export function decodeLooseString(result: CallResult): string {
  if (result === null || result === '0x') return ''
  try {
    return cleanText(decodeFunctionResult({ abi: tokenAbi, functionName: 'name', data: result }))
  } catch {
    if (result.length !== 66) return ''
    return cleanText(Buffer.from(result.slice(2), 'hex').toString('utf8'))
  }
}

/**
 * PostgreSQL text cannot hold NUL; control characters are noise in names.
 * The rule of every served text (`cleanValueText`): cut by code points, never
 * inside one; what is dropped or trimmed takes no room under the cap.
 */
export function cleanText(text: string, maxChars = 1_000): string {
  return cleanValueText(text, maxChars)
}
