'use client'

import { type DependencyList, useEffect, useState } from 'react'
import { NftDataApiError } from '@/client'

export type Loaded<T> =
  | { state: 'loading'; data?: undefined; error?: undefined }
  | { state: 'ok'; data: T; error?: undefined }
  | { state: 'error'; data?: undefined; error: { message: string; status: number; code: string } }

/** Describes a failed request for the page: the API's own message, or why there was none. */
export function describeError(err: unknown): { message: string; status: number; code: string } {
  if (err instanceof NftDataApiError)
    return {
      message: `${err.envelope.error.message}${err.requestId ? ` (request ${err.requestId})` : ''}`,
      status: err.status,
      code: err.code,
    }
  return { message: err instanceof Error ? err.message : String(err), status: 0, code: 'ERROR' }
}

/**
 * Runs `load` (a typed-client call) when the dependencies change; aborted when they change
 * again or the component goes away, so a slow answer never overwrites a newer one.
 */
export function useApi<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList): Loaded<T> {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' })
  useEffect(() => {
    const controller = new AbortController()
    setResult({ state: 'loading' })
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setResult({ state: 'ok', data })
      },
      (err) => {
        if (!controller.signal.aborted) setResult({ state: 'error', error: describeError(err) })
      },
    )
    return () => controller.abort()
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what `load` depends on.
  }, deps)
  return result
}

interface MoreState<Item, Cursor> {
  key: string
  items: Item[]
  next?: Cursor
  busy: boolean
  error?: string
}

/** The pages of a list after its first one, read on demand (a "more" button or scrolling). */
export interface MorePages<Item, Cursor> {
  busy: boolean
  error?: string
  /** The whole list shown after `first` (the first page), and the cursor of the page after its last item. */
  after(first: Page<Item, Cursor>): { items: Item[]; next: Cursor | undefined }
  load(cursor: Cursor): Promise<void>
}

/** A keyset page of a list, as the client returns it. */
type Page<Item, Cursor> = { data: Item[]; pagination: { next_page_params?: Cursor } }

/**
 * Keyset pages after the first, appended as they are read with the list's cursor
 * (`next_page_params`). `key` names the list (its address and filters): when it changes, the
 * pages read for the previous list are dropped, and an answer for it arriving late is ignored.
 */
export function useMorePages<Item, Cursor>(
  key: string,
  readPage: (cursor: Cursor) => Promise<Page<Item, Cursor>>,
): MorePages<Item, Cursor> {
  const [state, setState] = useState<MoreState<Item, Cursor>>({ key, items: [], busy: false })
  const shown: MoreState<Item, Cursor> = state.key === key ? state : { key, items: [], busy: false }
  return {
    busy: shown.busy,
    error: shown.error,
    after: (first) => ({
      items: [...first.data, ...shown.items],
      next: shown.items.length > 0 ? shown.next : first.pagination.next_page_params,
    }),
    async load(cursor) {
      setState({ ...shown, busy: true, error: undefined })
      try {
        const page = await readPage(cursor)
        setState((s) =>
          s.key === key
            ? { key, items: [...s.items, ...page.data], next: page.pagination.next_page_params, busy: false }
            : s,
        )
      } catch (err) {
        setState((s) => (s.key === key ? { ...s, busy: false, error: describeError(err).message } : s))
      }
    },
  }
}
