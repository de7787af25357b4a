'use client'

import { createParser } from 'eventsource-parser'
import { useCallback, useEffect, useRef, useState } from 'react'

/** Events kept on screen; older ones drop off the end. */
const SHOWN = 20

interface LiveEvent {
  id: string
  type: string
  data: {
    event_type: string
    token_id: string
    collection_address: string
    collection_name: string
    block_number: string
    transaction_hash: string
  }
}

type State = 'idle' | 'connecting' | 'live'

/**
 * Watches GET /v1/activity/stream with the demo token (docs/portal.md, "Try it"):
 * new transfers appear as they are indexed, newest first. A demo token holds one
 * stream at a time; stopping (or leaving the page) closes it.
 */
export function LiveActivity({ token, headingId }: { token: string | undefined; headingId: string }) {
  const [state, setState] = useState<State>('idle')
  const [events, setEvents] = useState<LiveEvent[]>([])
  const [note, setNote] = useState<{ text: string; error: boolean } | null>(null)
  const abort = useRef<AbortController | null>(null)

  const stop = useCallback(() => {
    abort.current?.abort()
    abort.current = null
    setState('idle')
  }, [])

  useEffect(() => stop, [stop])
  useEffect(() => {
    if (!token) stop()
  }, [token, stop])

  async function start() {
    if (!token) return
    const controller = new AbortController()
    abort.current = controller
    setState('connecting')
    setNote(null)
    try {
      const res = await fetch('/v1/activity/stream', {
        headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
        cache: 'no-store',
        signal: controller.signal,
      })
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } }
        setNote({ text: body.error?.message ?? `The stream answered ${res.status}.`, error: true })
        setState('idle')
        return
      }
      setState('live')
      const parser = createParser({
        onEvent: (message) => {
          const event = JSON.parse(message.data) as LiveEvent
          setEvents((shown) => [event, ...shown].slice(0, SHOWN))
        },
      })
      const reader = res.body.getReader()
      const decoder = new TextDecoder()
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        parser.feed(decoder.decode(value, { stream: true }))
      }
      // The server ended it: the token expired, or the service restarted.
      setNote({ text: 'The stream ended. Start it again (with a valid token) to go on.', error: false })
    } catch {
      if (controller.signal.aborted) return
      setNote({ text: 'The connection to the stream broke off.', error: true })
    }
    if (abort.current === controller) {
      abort.current = null
      setState('idle')
    }
  }

  return (
    <section className="panel live-activity" aria-labelledby={headingId}>
      <h2 id={headingId} className="h3 flush-top">
        Live activity
      </h2>
      <p className="muted small">
        New transfers as they are indexed, through <code>GET /v1/activity/stream</code> (Server-Sent Events).
      </p>
      {state === 'idle' ? (
        <button type="button" className="button secondary small" onClick={start} disabled={!token}>
          Watch live
        </button>
      ) : (
        <button type="button" className="button secondary small" onClick={stop}>
          Stop
        </button>
      )}
      <p className="small flush" role="status" data-testid="live-status">
        {state === 'connecting'
          ? 'Connecting…'
          : state === 'live'
            ? `Live: ${events.length === 0 ? 'waiting for new events' : `${events.length} shown`}.`
            : token
              ? ''
              : 'Get a demo token first.'}
      </p>
      {note ? (
        <p className={`alert small ${note.error ? 'error' : 'warn'}`} role={note.error ? 'alert' : 'status'}>
          {note.text}
        </p>
      ) : null}
      {events.length > 0 ? (
        <ol className="live-events" aria-label="Live events, newest first" data-testid="live-events">
          {events.map((e) => (
            <li key={e.id}>
              <span className={`live-kind ${e.type === 'activity.removed' ? 'removed' : 'added'}`}>
                {e.type === 'activity.removed' ? 'removed' : e.data.event_type}
              </span>{' '}
              {e.data.collection_name || `${e.data.collection_address.slice(0, 10)}…`} #{e.data.token_id}{' '}
              <span className="muted">block {e.data.block_number}</span>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  )
}
