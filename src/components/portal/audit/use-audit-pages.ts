'use client'

import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { useTRPC } from '../trpc'

export const AUDIT_PAGE_SIZE = 20

/**
 * The audit trail page by page: the procedure's cursors of the pages seen so
 * far make "Newer" a step back without a cursor of its own.
 */
export function useAuditPages() {
  const trpc = useTRPC()
  // [undefined, page-2 cursor, page-3 cursor, …]
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined])
  const cursor = cursors[cursors.length - 1]
  const events = useQuery(
    trpc.keys.auditEvents.queryOptions(
      cursor ? { limit: AUDIT_PAGE_SIZE, cursor } : { limit: AUDIT_PAGE_SIZE },
      {
        placeholderData: keepPreviousData,
      },
    ),
  )
  const nextCursor = events.data?.next_cursor
  return {
    events,
    page: cursors.length,
    canGoNewer: cursors.length > 1,
    canGoOlder: Boolean(nextCursor) && !events.isFetching,
    newer: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
    older: () => {
      if (nextCursor) setCursors((c) => [...c, nextCursor])
    },
  }
}
