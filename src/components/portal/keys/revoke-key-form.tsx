'use client'

import type { ApiKeyView } from '@/components/portal/trpc'
import { FormActions } from './form-actions'
import { useRevokeKey } from './use-api-keys'

export function RevokeKeyForm({
  apiKey,
  onCancel,
  onRevoked,
}: {
  apiKey: ApiKeyView
  onCancel: () => void
  onRevoked: () => void
}) {
  const revoke = useRevokeKey(onRevoked)
  return (
    <div className="form">
      <p>
        Every request with <strong>{apiKey.name}</strong> (<code>{apiKey.prefix}…</code>) will be refused with
        401 within a second, on every server. This cannot be undone.
      </p>
      <FormActions
        mutation={revoke}
        onCancel={onCancel}
        cancelLabel="Keep the key"
        label="Revoke key"
        busyLabel="Revoking…"
        onConfirm={() => revoke.mutate({ id: apiKey.id })}
      />
    </div>
  )
}
