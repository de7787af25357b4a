'use client'

import { useEffect, useRef } from 'react'
import type { MorePages } from './use-api'

/**
 * The end of a list: a button that reads its next page — also read when the button scrolls
 * into view, unless `loadOnScroll` is false — and the error of the last read, if any.
 */
export function MorePagesFooter<Item, Cursor>({
  more,
  next,
  label,
  loadOnScroll = true,
}: {
  more: MorePages<Item, Cursor>
  /** The cursor of the next page; no button without one. */
  next: Cursor | undefined
  label: string
  loadOnScroll?: boolean
}) {
  return (
    <>
      {next ? (
        <LoadMore busy={more.busy} onLoad={() => more.load(next)} label={label} loadOnScroll={loadOnScroll} />
      ) : null}
      {more.error ? (
        <p className="alert error" role="alert">
          {more.error}
        </p>
      ) : null}
    </>
  )
}

function LoadMore({
  busy,
  onLoad,
  label,
  loadOnScroll,
}: {
  busy: boolean
  onLoad: () => void
  label: string
  loadOnScroll: boolean
}) {
  const ref = useRef<HTMLButtonElement>(null)
  const latest = useRef(onLoad)
  latest.current = onLoad
  useEffect(() => {
    const button = ref.current
    if (!loadOnScroll || !button || busy || typeof IntersectionObserver === 'undefined') return
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) latest.current()
    })
    observer.observe(button)
    return () => observer.disconnect()
  }, [busy, loadOnScroll])
  return (
    <p>
      <button ref={ref} type="button" className="button secondary" disabled={busy} onClick={onLoad}>
        {busy ? 'Loading…' : label}
      </button>
    </p>
  )
}
