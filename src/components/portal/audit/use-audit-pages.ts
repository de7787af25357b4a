'use client'

import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { type AuditFilterInput, useTRPC } from '@/components/portal/trpc'

export const AUDIT_PAGE_SIZE = 20

/**
 * The audit trail page by page under the given filters: the procedure's
 * cursors of the pages seen so far make "Newer" a step back without a cursor
 * of its own. Other filters start again at the first page.
 */
export function useAuditPages(filter: AuditFilterInput) {
  const trpc = useTRPC()
  const filterKey = JSON.stringify(filter)
  // [undefined, page-2 cursor, page-3 cursor, …] of the filters in filterKey.
  const [pages, setPages] = useState<{ filterKey: string; cursors: (string | undefined)[] }>({
    filterKey,
    cursors: [undefined],
  })
  // Other filters forget the pages of the previous ones, so that coming back to them starts at page 1 too.
  if (pages.filterKey !== filterKey) setPages({ filterKey, cursors: [undefined] })
  const cursors = pages.filterKey === filterKey ? pages.cursors : [undefined]
  const cursor = cursors[cursors.length - 1]
  const events = useQuery(
    trpc.keys.auditEvents.queryOptions(
      { limit: AUDIT_PAGE_SIZE, ...filter, ...(cursor ? { cursor } : {}) },
      { placeholderData: keepPreviousData },
    ),
  )
  const nextCursor = events.data?.next_cursor
  return {
    events,
    page: cursors.length,
    canGoNewer: cursors.length > 1,
    canGoOlder: Boolean(nextCursor) && !events.isFetching,
    newer: () => setPages({ filterKey, cursors: cursors.length > 1 ? cursors.slice(0, -1) : cursors }),
    older: () => {
      if (nextCursor) setPages({ filterKey, cursors: [...cursors, nextCursor] })
    },
  }
}
