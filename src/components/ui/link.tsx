'use client'

import NextLink from 'next/link'
import { useRouter } from 'next/navigation'
import type { ComponentProps } from 'react'

/**
 * The site's one link to its own pages: next/link, with the next page prefetched when the reader
 * shows the intent to follow it (the pointer over it, keyboard focus) instead of whenever it
 * scrolls into view. Viewport prefetching has the server render a page for each link shown, at
 * the moment the page waits for its own data: the navigation and a 50-token gallery made some
 * 60 renders per gallery view (docs/explorer.md, "Prefetching").
 */
export function Link({
  href,
  onPointerEnter,
  onFocus,
  ...props
}: Omit<ComponentProps<typeof NextLink>, 'prefetch'>) {
  const router = useRouter()
  const prefetch = () => {
    if (typeof href === 'string') router.prefetch(href)
  }
  return (
    <NextLink
      href={href}
      prefetch={false}
      onPointerEnter={(event) => {
        prefetch()
        onPointerEnter?.(event)
      }}
      onFocus={(event) => {
        prefetch()
        onFocus?.(event)
      }}
      {...props}
    />
  )
}
