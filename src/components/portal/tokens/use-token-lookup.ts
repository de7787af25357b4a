'use client'

import { useCallback, useRef, useState } from 'react'
import type { DemoToken } from '@/components/try/types'
import { usePacedFetch } from '@/components/try/use-paced-fetch'

/** What /v1 says of a token with include_metadata=true (docs/api.md). */
export interface TokenData {
  collection_address: string
  token_id: string
  name?: string
  collection_name: string
  image_url?: string
  media_url?: string
  media_type?: string
  metadata_uri?: string
  metadata_status?: string
  description?: string
  attributes?: Array<{ trait_type: string; value: string | number | boolean; display_type?: string }>
  animation_url?: string
  external_url?: string
  background_color?: string
  metadata_updated_at?: string
}

export interface CollectionData {
  contract_address: string
  name: string
  symbol: string | null
  description: string | null
  image_url?: string | null
  total_supply: string
}

export interface TokenDocument {
  source_uri: string
  fetched_at: string
  document: unknown
}

export interface Lookup {
  address: string
  tokenId: string | null
}

export interface LookupResult {
  lookup: Lookup
  collection: CollectionData | null
  token: TokenData | null
  /** null: no document stored (not fetched yet, or the last fetch failed). */
  document: TokenDocument | null
  /** A sentence when something could not be read. */
  problem: string | null
  readAt: number
}

type Read<T> = { ok: true; data: T | null } | { ok: false; problem: string }

/**
 * Reads a collection and (optionally) one of its tokens from /v1 with the
 * tab's demo token, the try page's way (src/components/try): one request at a
 * time, paced under the token's limit. 404s are answers ("not indexed"), not
 * failures.
 */
export function useTokenLookup(token: DemoToken | null) {
  const paced = usePacedFetch(token?.token, token?.limits.requests_per_second ?? 1)
  const [result, setResult] = useState<LookupResult | null>(null)
  const [busy, setBusy] = useState(false)
  const generation = useRef(0)

  const read = useCallback(
    async <T>(path: string): Promise<Read<T>> => {
      let res: Response
      try {
        res = await paced(path)
      } catch {
        return { ok: false, problem: 'The service could not be reached.' }
      }
      const body = (await res.json().catch(() => ({}))) as { data?: T; error?: { message?: string } }
      if (res.status === 404) return { ok: true, data: null }
      if (!res.ok || body.data === undefined) {
        const message = body.error?.message ?? `The API answered ${res.status}.`
        return { ok: false, problem: message }
      }
      return { ok: true, data: body.data }
    },
    [paced],
  )

  const run = useCallback(
    async (lookup: Lookup) => {
      const mine = ++generation.current
      setBusy(true)
      try {
        const base = `/v1/collections/${lookup.address}`
        const collection = await read<CollectionData>(base)
        let tokenRead: Read<TokenData> = { ok: true, data: null }
        let docRead: Read<TokenDocument> = { ok: true, data: null }
        if (lookup.tokenId !== null && (!collection.ok || collection.data)) {
          const path = `/v1/nfts/${lookup.address}/${lookup.tokenId}`
          tokenRead = await read<TokenData>(`${path}?include_metadata=true`)
          if (tokenRead.ok && tokenRead.data) docRead = await read<TokenDocument>(`${path}/metadata`)
        }
        if (mine !== generation.current) return
        const problems = [collection, tokenRead, docRead].flatMap((r) => (r.ok ? [] : [r.problem]))
        setResult({
          lookup,
          collection: collection.ok ? collection.data : null,
          token: tokenRead.ok ? tokenRead.data : null,
          document: docRead.ok ? docRead.data : null,
          problem: problems[0] ?? null,
          readAt: Date.now(),
        })
      } finally {
        if (mine === generation.current) setBusy(false)
      }
    },
    [read],
  )

  return { result, busy, run }
}
