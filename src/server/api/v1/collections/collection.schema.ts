import { z } from 'zod'
import {
  address,
  beforeIdParam,
  beforeTimestampParam,
  CURSOR_GROUPS,
  decimalString,
  isoDateTime,
  limitParam,
  networkParam,
  pageOf,
  requireTogether,
  standardParam,
  timeCursor,
  txHash,
} from '@/lib/schemas'

export const collection = z
  .object({
    contract_address: address,
    network: z.string(),
    name: z.string().describe("name() as read from the contract; '' when the contract declares none."),
    symbol: z.string().nullable().describe('symbol() as read from the contract; null when unknown.'),
    description: z.string().nullable(),
    image_url: z
      .string()
      .nullable()
      .describe(
        "The contract's own collection image if declared, otherwise the image of its NFT with the lowest token_id; null when neither exists.",
      ),
    contract_type: z
      .enum(['ERC721', 'ERC1155'])
      .describe('Token standard: ERC721, or ERC1155 (only with the `standard` parameter, an extension).'),
    total_supply: decimalString.describe(
      'Tokens observed for the contract and not burned. ERC-1155: token ids with a supply above zero.',
    ),
    unique_holders: decimalString.describe(
      'Distinct current owners. ERC-1155: owners holding a positive balance of any of its ids.',
    ),
    total_transfers: decimalString.describe(
      'Transfer events observed. ERC-1155: id/value pairs (each pair of a TransferBatch counts once).',
    ),
    creator_address: address.describe('Deployer; absent when unknown.').optional(),
    deploy_tx_hash: txHash.nullable(),
    created_at: isoDateTime.describe('When the collection was first indexed.'),
  })
  .meta({
    id: 'Collection',
    example: {
      contract_address: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      network: 'devnet',
      name: 'Genesis Pioneers',
      symbol: 'PION',
      description: 'Pioneers of the devnet.',
      image_url: 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/1.png',
      contract_type: 'ERC721',
      total_supply: '1000',
      unique_holders: '412',
      total_transfers: '2731',
      creator_address: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
      deploy_tx_hash: '0x9f2b1d2ad9c1b4d3a8f0e2c7b6a5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7',
      created_at: '2026-01-02T03:04:05.678Z',
    },
  })

export type Collection = z.infer<typeof collection>

export const listCollectionsInput = z
  .strictObject({
    limit: limitParam,
    before_timestamp: beforeTimestampParam,
    before_id: beforeIdParam,
    network: networkParam,
    search: z
      .string()
      .max(200, 'must be at most 200 characters')
      .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters')

      .describe(
        'Case-insensitive substring of the name or symbol (at most 200 characters); a full contract address is an exact lookup.',
      )
      .optional(),
    standard: standardParam,
  })
  .superRefine((value, ctx) => requireTogether(value, CURSOR_GROUPS.time, ctx))

export type ListCollectionsInput = z.infer<typeof listCollectionsInput>

export const collectionPage = pageOf(collection, timeCursor).meta({ id: 'CollectionPage' })
export type CollectionPage = z.infer<typeof collectionPage>

export const getCollectionInput = z.strictObject({
  address: address.describe('Contract address, lowercase.'),
  network: networkParam,
  standard: standardParam,
})

export const getCollectionOutput = z.object({ data: collection })
