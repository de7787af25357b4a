/**
 * The try-it page promises to refuse exactly what the API would answer 400 to
 * (endpoints.ts: "so the page refuses exactly what the API would answer 400
 * to"), and its "next page" button sends `next_page_params` through that same
 * check (try-console.tsx, followNextPage → form.check → validateParams). The
 * oracle here is the procedures' own input schemas: what they accept, the
 * page must accept; what they refuse, the page must refuse.
 */
import { describe, expect, it } from 'vitest'
import { listCollectionOwnersInput } from '@/server/api/v1/collections/collection-owners.schema'
import { getCollectionTraitsInput } from '@/server/api/v1/collections/traits.schema'
import { listTokenHoldersInput } from '@/server/api/v1/nfts/holders.schema'
import { listOwnerCollectionsInput } from '@/server/api/v1/owners/owners.schema'
import { openApiDocument } from '@/server/rest/openapi'
import { endpointsFromOpenApi, validateParams } from './endpoints'

const doc = openApiDocument({ PUBLIC_URL: 'http://localhost:3000', NETWORK: 'devnet' })
const endpoints = endpointsFromOpenApi(doc as never)
const endpoint = (path: string) => endpoints.find((e) => e.path === path && e.method === 'GET')!

const contract = '0x5fbdb2315678afecb367f032d93f642f64180aa3'
const owner = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8'
const tokenId = '1'

describe('try page: cursors the API accepts are accepted, half cursors the API refuses are refused', () => {
  it('GET /v1/owners/{address}/collections: the next page (after_collection alone) is not refused', () => {
    const values = { address: owner, limit: '5', after_collection: contract }
    // The API takes exactly this: next_page_params of this endpoint is { after_collection }.
    expect(listOwnerCollectionsInput.safeParse(values).success).toBe(true)
    expect(validateParams(endpoint('/v1/owners/{address}/collections'), values)).toEqual({})
  })

  it('GET /v1/nfts/{address}/{tokenId}/owners: an after_balance of 79..155 digits is not refused', () => {
    // A holder's balance is a sum of uint256 amounts: up to 155 digits (docs/api.md, "Holders").
    const values = { address: contract, tokenId, after_balance: `1${'0'.repeat(80)}`, after_owner: owner }
    expect(listTokenHoldersInput.safeParse(values).success).toBe(true)
    expect(validateParams(endpoint('/v1/nfts/{address}/{tokenId}/owners'), values)).toEqual({})
  })

  it('GET /v1/collections/{address}/owners: after_token_count without after_owner is refused, as the API does', () => {
    const values = { address: contract, after_token_count: '3' }
    expect(listCollectionOwnersInput.safeParse(values).success).toBe(false)
    expect(Object.keys(validateParams(endpoint('/v1/collections/{address}/owners'), values))).toContain(
      'after_owner',
    )
  })

  it('GET /v1/collections/{address}/owners: after_token_count above 2^31 - 1 is refused, as the API does', () => {
    const values = { address: contract, after_token_count: '2147483648', after_owner: owner }
    expect(listCollectionOwnersInput.safeParse(values).success).toBe(false)
    expect(Object.keys(validateParams(endpoint('/v1/collections/{address}/owners'), values))).toContain(
      'after_token_count',
    )
  })

  it('GET /v1/collections: a network other than the indexed one is refused, as the API does', () => {
    expect(Object.keys(validateParams(endpoint('/v1/collections'), { network: 'mainnet' }))).toContain(
      'network',
    )
    expect(validateParams(endpoint('/v1/collections'), { network: 'devnet' })).toEqual({})
  })

  it('GET /v1/collections/{address}/traits: values_limit and one trait_type, refused exactly as the API refuses them', () => {
    const traits = endpoint('/v1/collections/{address}/traits')
    const cases: Array<Record<string, string>> = [
      { values_limit: '0' },
      { values_limit: '1000' },
      { values_limit: '1001' },
      { values_limit: '-1' },
      { values_limit: 'ten' },
      { trait_type: 'Mouth:Style' },
      { trait_type: 'T'.repeat(256) },
      { trait_type: 'T'.repeat(257) },
      { trait_type: 'T\u0000' },
    ]
    for (const values of cases) {
      const input = { address: contract, ...values }
      const accepted = getCollectionTraitsInput.safeParse(input).success
      const errors = validateParams(traits, input)
      expect(Object.keys(errors).length === 0, JSON.stringify(values).slice(0, 40)).toBe(accepted)
    }
  })
})
