import type pg from 'pg'
import type { Logger } from 'pino'
import { encodeFunctionData, type Hex, parseAbi } from 'viem'
import { type PendingTransfer, wordToAddress } from '../events/types'
import type { Rpc } from '../rpc/client'
import { isExecutionFailure, isTransientRpcError } from '../rpc/client'
import { knownVerdicts, rejectContract } from '../store/classification'

const abi = parseAbi([
  'function supportsInterface(bytes4) view returns (bool)',
  'function ownerOf(uint256) view returns (address)',
])
const ERC165_ID = '0x01ffc9a7'
const ERC721_ID = '0x80ac58cd'
/** The interface id CryptoKitties and other pre-final ERC-721 drafts answer to. */
const ERC721_DRAFT_ID = '0x9a20483d'

/**
 * Decides whether a contract that emitted the 1-topic legacy Transfer shape is
 * an NFT (ERC-165 says ERC-721, or ownerOf(tokenId) answers) or an old ERC-20
 * with the same shape. Verdicts are remembered: NFTs become collections,
 * rejected contracts go to non_nft_contracts, so each is probed once.
 */
export class ContractClassifier {
  private readonly verdicts = new Map<string, boolean>()

  constructor(
    private readonly rpc: Rpc,
    private readonly pool: pg.Pool,
    private readonly logger: Logger,
  ) {}

  async keepNftTransfers(candidates: PendingTransfer[]): Promise<PendingTransfer[]> {
    if (candidates.length === 0) return []
    const byContract = new Map<string, PendingTransfer[]>()
    for (const c of candidates) byContract.set(c.collection, [...(byContract.get(c.collection) ?? []), c])
    const unknown = [...byContract.keys()].filter((a) => !this.verdicts.has(a))
    if (unknown.length > 0) await this.loadVerdicts(unknown)
    for (const address of unknown) {
      if (this.verdicts.has(address)) continue
      const verdict = await this.probe(address as Hex, byContract.get(address)!.slice(0, 3))
      this.verdicts.set(address, verdict.nft)
      if (!verdict.nft) {
        await rejectContract(this.pool, address, verdict.reason)
      }
      this.logger.info(
        { contract: address, nft: verdict.nft },
        `legacy Transfer contract classified: ${verdict.reason}`,
      )
    }
    return candidates.filter((c) => this.verdicts.get(c.collection))
  }

  private async loadVerdicts(addresses: string[]) {
    for (const [address, nft] of await knownVerdicts(this.pool, addresses)) this.verdicts.set(address, nft)
  }

  private async probe(address: Hex, samples: PendingTransfer[]): Promise<{ nft: boolean; reason: string }> {
    const block = samples[0]!.blockNumber
    const supports = async (id: Hex) => {
      const out = await this.call(
        address,
        encodeFunctionData({ abi, functionName: 'supportsInterface', args: [id] }),
        block,
      )
      return out !== null && out.length === 66 && BigInt(out) === 1n
    }
    if ((await supports(ERC165_ID)) && !(await supports('0xffffffff'))) {
      if ((await supports(ERC721_ID)) || (await supports(ERC721_DRAFT_ID))) {
        return { nft: true, reason: 'ERC-165 reports ERC-721' }
      }
    }
    for (const sample of samples) {
      const data = encodeFunctionData({ abi, functionName: 'ownerOf', args: [sample.tokenId] })
      const out = await this.call(address, data, sample.blockNumber)
      if (out !== null && out.length === 66 && wordToAddress(out) !== null)
        return { nft: true, reason: 'ownerOf answers' }
    }
    return { nft: false, reason: 'legacy Transfer shape, but neither ERC-165 ERC-721 nor ownerOf' }
  }

  /**
   * eth_call at the event's block; null when the call reverts or the function
   * is missing. A node without that block's state (not an archive) is asked
   * about the latest state instead.
   */
  private async call(to: Hex, data: Hex, block: bigint): Promise<Hex | null> {
    for (const tag of [`0x${block.toString(16)}`, 'latest']) {
      try {
        return await this.rpc.request<Hex>('eth_call', [{ to, data }, tag])
      } catch (err) {
        if (isExecutionFailure(err)) return null
        if (isTransientRpcError(err)) throw err
      }
    }
    return null
  }
}
