'use client'

import { useRouter } from 'next/navigation'
import { signOut } from 'next-auth/react'
import { useCallback } from 'react'
import { useConfig } from 'wagmi'
import { disconnect } from 'wagmi/actions'

/**
 * Signs this browser out: next-auth's sign-out (which revokes the session on
 * the server and clears the cookie), the wallet disconnected, the page
 * re-rendered — signed out, it is the sign-in panel.
 */
export function useSignOut(): () => Promise<void> {
  const router = useRouter()
  const config = useConfig()
  return useCallback(async () => {
    await signOut({ redirect: false })
    await disconnect(config).catch(() => undefined)
    router.refresh()
  }, [config, router])
}
