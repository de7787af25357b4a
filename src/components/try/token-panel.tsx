import { mmss, plural } from './format'
import type { useDemoToken } from './use-demo-token'

/** The demo token: how to get one, or its countdown, limits and scopes. */
export function TokenPanel({
  demo,
  headingId,
}: {
  demo: ReturnType<typeof useDemoToken>
  headingId: string
}) {
  const { token, valid, expiresIn, busy, error, fetchToken } = demo
  return (
    <section className="panel token-box" aria-labelledby={headingId}>
      <h2 id={headingId} className="h3 flush-top">
        Demo token
      </h2>
      {valid && token ? (
        <>
          <p className="muted small flush">Expires in</p>
          <p className={`countdown${expiresIn < 60_000 ? ' low' : ''}`} data-testid="token-countdown">
            <span aria-hidden="true">{mmss(expiresIn)}</span>
            <span className="visually-hidden">{plural(Math.ceil(expiresIn / 60_000), 'minute')} left</span>
          </p>
          <dl>
            <dt>Token</dt>
            <dd data-testid="demo-token">{token.token.slice(0, 12)}…</dd>
            <dt>Limits</dt>
            <dd>
              {token.limits.requests_per_second}/s · {token.limits.requests_per_minute}/min ·{' '}
              {token.limits.concurrent} at a time
            </dd>
            <dt>Scopes</dt>
            <dd>all {plural(token.scopes.length, 'read scope')}</dd>
          </dl>
          <button type="button" className="button secondary small" onClick={fetchToken} disabled={busy}>
            Get a new token
          </button>
        </>
      ) : (
        <>
          <p className="muted small">
            A demo token lets this page call the API for 15 minutes with every read scope. It lives only in
            this tab. For applications, create a key in the <a href="/portal">portal</a>.
          </p>
          {token ? (
            <p className="alert warn small" role="status">
              Your demo token expired. Get a new one to keep going.
            </p>
          ) : null}
          <button type="button" className="button" onClick={fetchToken} disabled={busy}>
            {busy ? 'Getting a token…' : 'Get a demo token'}
          </button>
        </>
      )}
      {error ? (
        <p className="alert error small" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  )
}
