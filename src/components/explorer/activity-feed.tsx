'use client'

import { useCallback, useEffect, useRef, useState } from 'react'
import { type ActivityItem, eventKey } from '@/client'
import { ChainText } from '@/components/ui/chain-text'
import { displayText } from '@/components/ui/display-text'
import { Link } from '@/components/ui/link'
import { explorerClient, onChainHead } from './api'
import { Artwork } from './artwork'
import { useTokenArtwork } from './artwork-cache'
import { count, exploreHref, short, shortId } from './links'
import { formatTime } from './nft-view'

/** Events kept on screen. */
const SHOWN = 30
/** The newest events whose artwork is read (one request each, at low priority). */
const WITH_ARTWORK = 12

type Mode = 'connecting' | 'stream' | 'poll' | 'stopped' | 'error'

/**
 * /explore/activity (and the home page's newest mints): new events as the index gets them,
 * through the typed client's follow() — the live stream (GET /v1/activity/stream) when the
 * service has one, else polling /v1/activity — each event once (the client deduplicates by
 * transaction, log and batch index; the list is keyed the same way). Events a reorganisation
 * took away are struck out. Confirmations grow with the head: every event names the head it
 * was counted at (block + confirmations), every answer of the API names it (X-Chain-Head),
 * and the index status is read again every 15 s.
 */
export function ActivityFeed({
  eventType,
  limit = SHOWN,
  heading,
  headingLevel = 2,
  stream = true,
}: {
  eventType?: 'mint' | 'transfer' | 'burn'
  limit?: number
  heading: string
  headingLevel?: 1 | 2
  /** false: poll only, leaving the token's one live stream to the activity page. */
  stream?: boolean
}) {
  const [events, setEvents] = useState<ActivityItem[]>([])
  const [removed, setRemoved] = useState<Set<string>>(new Set())
  const [mode, setMode] = useState<Mode>('connecting')
  const [error, setError] = useState<string | null>(null)
  const [head, setHead] = useState<bigint | null>(null)
  const [paused, setPaused] = useState(false)
  const seenHead = useRef<bigint | null>(null)

  const raiseHead = useCallback((candidate: bigint) => {
    if (seenHead.current === null || candidate > seenHead.current) {
      seenHead.current = candidate
      setHead(candidate)
    }
  }, [])

  useEffect(() => {
    if (paused) {
      setMode('stopped')
      return
    }
    const stop = new AbortController()
    setMode('connecting')
    setError(null)
    ;(async () => {
      try {
        for await (const event of explorerClient().followActivity({
          query: {
            limit: Math.min(limit, 100),
            standard: 'all',
            ...(eventType ? { event_type: eventType } : {}),
          },
          intervalMs: 6000,
          stream,
          signal: stop.signal,
          onMode: (m) => setMode(m),
          onRemoved: (e) => setRemoved((r) => new Set(r).add(eventKey(e))),
        })) {
          if (event.confirmations !== null && event.block_number !== '0')
            raiseHead(BigInt(event.block_number) + BigInt(event.confirmations))
          setEvents((shown) => {
            const key = eventKey(event)
            const rest = shown.filter((e) => eventKey(e) !== key)
            return [event, ...rest].slice(0, limit)
          })
        }
      } catch (err) {
        if (stop.signal.aborted) return
        setMode('error')
        setError(err instanceof Error ? err.message : String(err))
      }
    })()
    return () => stop.abort()
  }, [paused, eventType, limit, stream, raiseHead])

  // The head every answer reports (X-Chain-Head), and between answers the index status.
  useEffect(() => onChainHead(raiseHead), [raiseHead])
  useEffect(() => {
    if (paused) return
    const stop = new AbortController()
    const tick = async () => {
      try {
        const status = await explorerClient().get('/v1/indexer/status', { signal: stop.signal })
        raiseHead(BigInt(status.data.last_seen_block))
      } catch {
        // The next tick tries again.
      }
    }
    const timer = setInterval(tick, 15_000)
    return () => {
      clearInterval(timer)
      stop.abort()
    }
  }, [paused, raiseHead])

  const Heading = headingLevel === 1 ? 'h1' : 'h2'
  return (
    <section className="activity-feed" aria-labelledby="activity-heading">
      <div className="activity-header">
        <Heading id="activity-heading" className={headingLevel === 2 ? 'h3 flush-top' : undefined}>
          {heading}
        </Heading>
        <button type="button" className="button secondary small" onClick={() => setPaused((p) => !p)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
      </div>
      <p className="muted small" role="status" data-testid="activity-status">
        {mode === 'connecting'
          ? 'Connecting…'
          : mode === 'stream'
            ? 'Live through the activity stream.'
            : mode === 'poll'
              ? 'Live by polling the activity feed.'
              : mode === 'stopped'
                ? 'Paused.'
                : 'Stopped.'}
        {head !== null ? ` Chain head ${head.toString()}.` : ''}
      </p>
      {error ? (
        <p className="alert error" role="alert">
          The feed stopped: {error}
        </p>
      ) : null}
      {events.length === 0 && mode !== 'connecting' ? <p className="muted">No event yet.</p> : null}
      <ol className="activity-list" aria-label={`${heading}, newest first`} data-testid="activity-list">
        {events.map((e, i) => (
          <ActivityRow
            key={eventKey(e)}
            event={e}
            head={head}
            removed={removed.has(eventKey(e))}
            withArtwork={i < WITH_ARTWORK}
          />
        ))}
      </ol>
    </section>
  )
}

function ActivityRow({
  event: e,
  head,
  removed,
  withArtwork,
}: {
  event: ActivityItem
  head: bigint | null
  removed: boolean
  withArtwork: boolean
}) {
  const nft = useTokenArtwork(e.collection_address, e.token_id, withArtwork)
  const confirmations =
    e.block_number === '0'
      ? null
      : head !== null && head >= BigInt(e.block_number)
        ? Number(head - BigInt(e.block_number))
        : e.confirmations
  return (
    <li
      className={`activity-row${removed ? ' removed' : ''}`}
      data-testid="activity-row"
      data-key={eventKey(e)}
    >
      <Artwork nft={nft ?? undefined} alt="" size={64} pending={withArtwork && nft === undefined} />
      <div>
        <span className={`event-kind ${e.event_type}`}>{removed ? 'reorged away' : e.event_type}</span>{' '}
        <Link href={exploreHref.nft(e.collection_address, e.token_id)}>
          {displayText(nft?.name) ? (
            <ChainText text={nft?.name} fallback={null} max={80} />
          ) : (
            <>
              <ChainText text={e.collection_name} fallback={short(e.collection_address)} max={60} /> #
              {shortId(e.token_id)}
            </>
          )}
        </Link>
        {e.amount !== undefined && e.amount !== '1' ? ` ×${count(e.amount)}` : ''}
        <span className="muted small activity-meta">
          block {e.block_number} · <time dateTime={e.block_timestamp}>{formatTime(e.block_timestamp)}</time> ·{' '}
          <span data-testid="confirmations">
            {confirmations === null
              ? 'confirmations unknown'
              : `${confirmations} confirmation${confirmations === 1 ? '' : 's'}`}
          </span>
        </span>
      </div>
    </li>
  )
}
