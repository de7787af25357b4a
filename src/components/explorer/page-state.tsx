import type { ReactNode } from 'react'
import type { Loaded } from './use-api'

/** What a section shows while its request runs or after it failed; its content once loaded. */
export function PageState<T>({
  loaded,
  what,
  children,
}: {
  loaded: Loaded<T>
  /** "the collections": completes "Loading …" and "Could not load …". */
  what: string
  children: (data: T) => ReactNode
}) {
  if (loaded.state === 'loading')
    return (
      <p className="muted" role="status" data-testid="loading">
        Loading {what}…
      </p>
    )
  if (loaded.state === 'error')
    return (
      <p className="alert error" role="alert" data-testid="load-error">
        {loaded.error.status === 404 ? `Not found: ${what}.` : `Could not load ${what}.`}{' '}
        {loaded.error.message}
      </p>
    )
  return <>{children(loaded.data)}</>
}
