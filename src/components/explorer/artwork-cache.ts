'use client'

/**
 * Artwork of tokens named by activity events (which carry no media fields): each token read
 * once, through the typed client at low priority (GET /v1/nfts/{address}/{tokenId} with
 * `include_metadata=true` for its thumbnails), remembered for the page's life. A token that
 * cannot be read is remembered as having no artwork.
 */
import { useEffect, useState } from 'react'
import type { Nft } from '@/client'
import { explorerClient } from './api'

const known = new Map<string, Promise<Nft | null>>()
/** Tokens remembered at most (oldest forgotten first). */
const MEMORY = 500

function read(collection: string, tokenId: string): Promise<Nft | null> {
  const key = `${collection}:${tokenId}`
  let entry = known.get(key)
  if (!entry) {
    entry = explorerClient('low')
      .get('/v1/nfts/{address}/{tokenId}', {
        path: { address: collection, tokenId },
        query: { include_metadata: true, standard: 'all' },
      })
      .then((r) => r.data)
      .catch(() => null)
    known.set(key, entry)
    if (known.size > MEMORY) known.delete(known.keys().next().value as string)
  }
  return entry
}

/** The token's artwork fields once read; undefined meanwhile, or while `enabled` is false. */
export function useTokenArtwork(collection: string, tokenId: string, enabled = true): Nft | null | undefined {
  const [nft, setNft] = useState<Nft | null | undefined>(undefined)
  useEffect(() => {
    if (!enabled) return
    let live = true
    void read(collection, tokenId).then((n) => {
      if (live) setNft(n)
    })
    return () => {
      live = false
    }
  }, [collection, tokenId, enabled])
  return nft
}
