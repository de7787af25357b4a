'use client'

import { useState } from 'react'
import { useSignOut } from './use-sign-out'

export function SignOutButton() {
  const signOut = useSignOut()
  const [busy, setBusy] = useState(false)
  return (
    <button
      type="button"
      className="button secondary small"
      disabled={busy}
      onClick={async () => {
        setBusy(true)
        await signOut()
        setBusy(false)
      }}
    >
      Sign out
    </button>
  )
}
