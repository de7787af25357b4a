'use client'

import { useState } from 'react'
import type { ApiKeyView, KeyWithSecret } from '@/components/portal/trpc'

/** The one key dialog open at a time, if any; a new or rotated secret is the last step of both. */
export type KeyDialog =
  | { kind: 'create' }
  | { kind: 'edit'; key: ApiKeyView }
  | { kind: 'rotate'; key: ApiKeyView }
  | { kind: 'revoke'; key: ApiKeyView }
  | { kind: 'secret'; title: string; result: KeyWithSecret; note?: string }
  | null

/**
 * Which dialog is open, and what the page announces to screen readers after
 * each change (the dialogs themselves close before the table updates).
 */
export function useKeyDialogs() {
  const [dialog, setDialog] = useState<KeyDialog>(null)
  const [announcement, setAnnouncement] = useState('')
  return {
    dialog,
    announcement,
    close: () => setDialog(null),
    openCreate: () => setDialog({ kind: 'create' }),
    openEdit: (key: ApiKeyView) => setDialog({ kind: 'edit', key }),
    openRotate: (key: ApiKeyView) => setDialog({ kind: 'rotate', key }),
    openRevoke: (key: ApiKeyView) => setDialog({ kind: 'revoke', key }),
    created: (result: KeyWithSecret) => {
      setAnnouncement(`Key ${result.key.name} created.`)
      setDialog({ kind: 'secret', title: 'Your new API key', result })
    },
    updated: (key: ApiKeyView) => {
      setAnnouncement(`Key ${key.name} updated.`)
      setDialog(null)
    },
    rotated: (result: KeyWithSecret, note: string) => {
      setAnnouncement(`Key ${result.key.name} rotated.`)
      setDialog({ kind: 'secret', title: 'The new secret', result, note })
    },
    revoked: (key: ApiKeyView) => {
      setAnnouncement(`Key ${key.name} revoked.`)
      setDialog(null)
    },
  }
}
