'use client'

import { useId, useState } from 'react'
import type { ApiKeyView, KeyWithSecret } from '@/components/portal/trpc'
import { FormActions } from './form-actions'
import { useRotateKey } from './use-api-keys'

export const GRACE_CHOICES = [
  { seconds: 3600, label: '1 hour' },
  { seconds: 24 * 3600, label: '24 hours' },
  { seconds: 3 * 24 * 3600, label: '3 days' },
  { seconds: 7 * 24 * 3600, label: '7 days' },
]

/** What the new-secret dialog says about the old secret. */
function oldSecretNote(apiKey: ApiKeyView, graceSeconds: number): string {
  if (graceSeconds === 0) return `The old secret (${apiKey.prefix}…) stopped working just now.`
  const label = GRACE_CHOICES.find((c) => c.seconds === graceSeconds)?.label ?? `${graceSeconds} s`
  return `The old secret (${apiKey.prefix}…) keeps working for ${label}; deploy the new one before then.`
}

export function RotateKeyForm({
  apiKey,
  onCancel,
  onRotated,
}: {
  apiKey: ApiKeyView
  onCancel: () => void
  onRotated: (result: KeyWithSecret, note: string) => void
}) {
  const id = useId()
  const [when, setWhen] = useState<'now' | 'grace'>('now')
  const [grace, setGrace] = useState(GRACE_CHOICES[1]!.seconds)
  const rotate = useRotateKey((result, graceSeconds) =>
    onRotated(result, oldSecretNote(apiKey, graceSeconds)),
  )
  return (
    <form
      className="form"
      onSubmit={(e) => {
        e.preventDefault()
        rotate.mutate({ id: apiKey.id, grace_seconds: when === 'now' ? 0 : grace })
      }}
    >
      <p>
        Rotation issues a new secret for <strong>{apiKey.name}</strong> with the same scopes and origins.
        Choose when the current secret <code>{apiKey.prefix}…</code> stops working.
      </p>
      <fieldset className="field">
        <legend>Old secret stops working</legend>
        <label className="radio">
          <input
            type="radio"
            name="when"
            value="now"
            checked={when === 'now'}
            onChange={() => setWhen('now')}
            data-autofocus
          />
          <span>
            Now <span className="help">Use this when the secret may have leaked.</span>
          </span>
        </label>
        <label className="radio">
          <input
            type="radio"
            name="when"
            value="grace"
            checked={when === 'grace'}
            onChange={() => setWhen('grace')}
          />
          <span>
            After a grace period{' '}
            <span className="help">
              Both secrets work meanwhile, so you can deploy the new one without downtime.
            </span>
          </span>
        </label>
        <div className="field inset">
          <label htmlFor={`${id}-grace`}>Grace period</label>
          <select
            id={`${id}-grace`}
            value={grace}
            disabled={when !== 'grace'}
            onChange={(e) => setGrace(Number(e.target.value))}
          >
            {GRACE_CHOICES.map((c) => (
              <option key={c.seconds} value={c.seconds}>
                {c.label}
              </option>
            ))}
          </select>
        </div>
      </fieldset>
      <FormActions mutation={rotate} onCancel={onCancel} label="Rotate key" busyLabel="Rotating…" />
    </form>
  )
}
