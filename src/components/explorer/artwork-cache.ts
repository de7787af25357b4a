'use client'

/**
 * Artwork of tokens named by activity events (which carry no media fields): each token read
 * once, through the typed client at low priority (GET /v1/nfts/{address}/{tokenId} with
 * `include_metadata=true` for its thumbnails), remembered for the page's life. A token that
 * cannot be read is remembered as having no artwork. A read nobody waits for any more (its row
 * scrolled out of the newest, or the page changed) is cancelled before it is sent, so a busy
 * feed never queues more reads than it shows rows.
 */
import { useEffect, useState } from 'react'
import type { Nft } from '@/client'
import { explorerClient } from './api'

const known = new Map<string, Nft | null>()
const reading = new Map<
  string,
  { promise: Promise<Nft | null>; controller: AbortController; users: number }
>()
/** Tokens remembered at most (oldest forgotten first). */
const MEMORY = 500

function remember(key: string, nft: Nft | null) {
  known.set(key, nft)
  if (known.size > MEMORY) known.delete(known.keys().next().value as string)
}

/** The token's artwork fields once read; undefined meanwhile, or while `enabled` is false. */
export function useTokenArtwork(collection: string, tokenId: string, enabled = true): Nft | null | undefined {
  const key = `${collection}:${tokenId}`
  const [nft, setNft] = useState<Nft | null | undefined>(() => known.get(key))
  useEffect(() => {
    if (known.has(key)) {
      setNft(known.get(key))
      return
    }
    if (!enabled) return
    let entry = reading.get(key)
    if (!entry) {
      const controller = new AbortController()
      const promise = explorerClient('low')
        .get('/v1/nfts/{address}/{tokenId}', {
          path: { address: collection, tokenId },
          query: { include_metadata: true, standard: 'all' },
          signal: controller.signal,
        })
        .then(
          (r) => r.data as Nft | null,
          () => null,
        )
        .then((n) => {
          reading.delete(key)
          if (!controller.signal.aborted) remember(key, n)
          return n
        })
      entry = { promise, controller, users: 0 }
      reading.set(key, entry)
    }
    const mine = entry
    mine.users++
    let live = true
    void mine.promise.then((n) => {
      if (live && !mine.controller.signal.aborted) setNft(n)
    })
    return () => {
      live = false
      if (--mine.users === 0 && reading.get(key) === mine) {
        mine.controller.abort()
        reading.delete(key)
      }
    }
  }, [key, collection, tokenId, enabled])
  return nft
}
