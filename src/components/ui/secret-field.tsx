'use client'

import { CopyButton } from '@/components/ui/copy-button'

/** A secret shown once: read-only, selected on focus, with a copy button. */
export function SecretField({
  id,
  label,
  secret,
  testId,
  autoFocus,
}: {
  id: string
  label: React.ReactNode
  secret: string
  testId: string
  autoFocus?: boolean
}) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <div className="secret-row">
        <input
          id={id}
          className="secret"
          data-testid={testId}
          data-autofocus={autoFocus ? true : undefined}
          readOnly
          value={secret}
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton value={secret} label="Copy secret" className="button" />
      </div>
    </>
  )
}
