import type { ApiKeyView } from '@/components/portal/trpc'
import { RelativeTime } from '@/components/ui/time'

/** Active or revoked, and until when the old secrets of a rotation's grace period still work. */
export function KeyStatus({ apiKey }: { apiKey: ApiKeyView }) {
  if (apiKey.status === 'revoked') return <span className="badge bad">Revoked</span>
  const ending = apiKey.active_secrets.flatMap((s) =>
    s.expires_at === null ? [] : [{ prefix: s.prefix, expiresAt: s.expires_at }],
  )
  return (
    <>
      <span className="badge complete">Active</span>
      {ending.map((s) => (
        <span key={s.prefix} className="small muted block">
          old secret <code>{s.prefix}…</code> expires <RelativeTime iso={s.expiresAt} />
        </span>
      ))}
    </>
  )
}
