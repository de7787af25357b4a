'use client'

import { useState } from 'react'

/** Copies `value` to the clipboard and says so (visibly and to screen readers). */
export function CopyButton({
  value,
  label = 'Copy',
  className,
}: {
  value: string
  label?: string
  className?: string
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle')
  async function copy() {
    try {
      await navigator.clipboard.writeText(value)
      setState('copied')
    } catch {
      setState('failed')
    }
    setTimeout(() => setState('idle'), 2500)
  }
  return (
    <button type="button" className={className ?? 'button secondary small'} onClick={copy}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy' : label}
      <span className="visually-hidden" aria-live="polite">
        {state === 'copied'
          ? 'Copied to the clipboard'
          : state === 'failed'
            ? 'Copy failed; select the text'
            : ''}
      </span>
    </button>
  )
}
