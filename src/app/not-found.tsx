import type { Metadata } from 'next'

export const metadata: Metadata = { title: 'Page not found' }

/** Any path no page or API route answers: say so plainly and offer the ways on. */
export default function NotFound() {
  return (
    <section className="not-found" aria-labelledby="not-found-heading">
      <p className="not-found-code" aria-hidden="true">
        404
      </p>
      <h1 id="not-found-heading">Page not found</h1>
      <p className="lead">
        Nothing lives at this address. API calls go to <code>/v1/…</code> with a bearer key; everything else
        starts from one of these pages.
      </p>
      <div className="hero-actions">
        <a className="button" href="/">
          Home
        </a>
        <a className="button secondary" href="/docs">
          Docs
        </a>
        <a className="button secondary" href="/try">
          Try it
        </a>
        <a className="button secondary" href="/portal">
          Portal
        </a>
      </div>
    </section>
  )
}
