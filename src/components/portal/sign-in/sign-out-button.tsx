'use client'

import { useRouter } from 'next/navigation'
import { signOut } from 'next-auth/react'
import { useState } from 'react'
import { useConfig } from 'wagmi'
import { disconnect } from 'wagmi/actions'

export function SignOutButton() {
  const router = useRouter()
  const config = useConfig()
  const [busy, setBusy] = useState(false)
  return (
    <button
      type="button"
      className="button secondary small"
      disabled={busy}
      onClick={async () => {
        setBusy(true)
        await signOut({ redirect: false })
        await disconnect(config).catch(() => undefined)
        router.refresh()
        setBusy(false)
      }}
    >
      Sign out
    </button>
  )
}
