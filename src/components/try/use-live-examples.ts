'use client'

import { useEffect, useRef, useState } from 'react'
import type { EndpointSpec, ParamValues } from './endpoints'
import type { PacedFetch } from './use-paced-fetch'

/** Values that exist in this index right now: a collection, one of its tokens and its owner. */
export interface LiveExamples {
  collection: string
  tokenId?: string
  owner?: string
}

/** An endpoint that cannot be tried without an address or token id. */
export function needsExamples(endpoint: EndpointSpec | undefined): boolean {
  return Boolean(endpoint?.params.some((p) => p.in === 'path'))
}

/** The examples that fit an endpoint's path parameters: an owner for /owners, else a collection. */
export function examplesFor(endpoint: EndpointSpec, examples: LiveExamples): ParamValues {
  const values: ParamValues = {}
  for (const p of endpoint.params) {
    if (p.in !== 'path') continue
    if (p.name === 'address') {
      const address = endpoint.path.startsWith('/v1/owners/') ? examples.owner : examples.collection
      if (address) values.address = address
    }
    if (p.name === 'tokenId' && examples.tokenId) values.tokenId = examples.tokenId
  }
  return values
}

/**
 * Reads live examples with the demo token the first time an endpoint needs
 * them (two requests of the demo budget, once per page): the newest
 * collection and its first token.
 */
export function useLiveExamples(pacedFetch: PacedFetch, wanted: boolean): LiveExamples | null {
  const [examples, setExamples] = useState<LiveExamples | null>(null)
  const started = useRef(false)
  useEffect(() => {
    if (!wanted || started.current) return
    started.current = true
    void (async () => {
      try {
        const collections = (await (await pacedFetch('/v1/collections?limit=1')).json()) as {
          data?: { contract_address: string }[]
        }
        const collection = collections.data?.[0]?.contract_address
        // A refusal (429 …) or an empty index: try again the next time an endpoint wants examples.
        if (!collection) {
          started.current = false
          return
        }
        const nfts = (await (await pacedFetch(`/v1/collections/${collection}/nfts?limit=1`)).json()) as {
          data?: { token_id: string; current_owner: string }[]
        }
        const nft = nfts.data?.[0]
        setExamples({
          collection,
          ...(nft ? { tokenId: nft.token_id, owner: nft.current_owner } : {}),
        })
      } catch {
        // No examples: the fields stay empty, with their placeholders.
        started.current = false
      }
    })()
  }, [wanted, pacedFetch])
  return examples
}
