'use client'

import { useId } from 'react'
import { SecretField } from '@/components/ui/secret-field'

/** A key's secret, shown once: copy it now or rotate later. */
export function SecretReveal({
  secret,
  keyName,
  note,
  onDone,
}: {
  secret: string
  keyName: string
  note?: string | undefined
  onDone: () => void
}) {
  const id = useId()
  return (
    <div className="form">
      <p className="alert warn" role="alert">
        <strong>Copy this secret now. It will not be shown again.</strong> Only a hash is stored; if you lose
        it, rotate the key to get a new one.
      </p>
      <SecretField
        id={`${id}-secret`}
        label={<>Secret of “{keyName}”</>}
        secret={secret}
        testId="new-secret"
        autoFocus
      />
      {note ? <p className="muted">{note}</p> : null}
      <p className="help">
        Store it in your server’s secret manager or environment, and send it as{' '}
        <code>Authorization: Bearer &lt;secret&gt;</code>. Never put it in a browser bundle, a repository or a
        URL.
      </p>
      <div className="form-actions">
        <button type="button" className="button" onClick={onDone}>
          I have stored the secret
        </button>
      </div>
    </div>
  )
}
