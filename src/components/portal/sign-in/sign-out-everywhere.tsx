'use client'

import { useMutation } from '@tanstack/react-query'
import { useState } from 'react'
import { FormActions } from '@/components/portal/keys/form-actions'
import { useTRPC } from '@/components/portal/trpc'
import { Dialog } from '@/components/ui/dialog'
import { useSignOut } from './use-sign-out'

/** "Sign out everywhere": ends every session of the wallet, after a confirmation whose default keeps them. */
export function SignOutEverywhereButton() {
  const [open, setOpen] = useState(false)
  const close = () => setOpen(false)
  return (
    <>
      <button type="button" className="button secondary small" onClick={() => setOpen(true)}>
        Sign out everywhere
      </button>
      <Dialog open={open} title="Sign out everywhere?" onClose={close}>
        {open ? <SignOutEverywhereForm onCancel={close} /> : null}
      </Dialog>
    </>
  )
}

function SignOutEverywhereForm({ onCancel }: { onCancel: () => void }) {
  const trpc = useTRPC()
  const signOut = useSignOut()
  const everywhere = useMutation(
    trpc.sessions.signOutEverywhere.mutationOptions({
      // This browser's session has ended with the others; sign-out clears its cookie.
      onSuccess: () => signOut(),
    }),
  )
  return (
    <div className="form">
      <p>
        Every session of this wallet ends within a second — in this browser and in every other browser or
        device where it is signed in. API keys are not affected: revoke a key to stop it.
      </p>
      <FormActions
        mutation={everywhere}
        onCancel={onCancel}
        cancelLabel="Stay signed in"
        label="Sign out everywhere"
        busyLabel="Signing out…"
        onConfirm={() => everywhere.mutate()}
      />
    </div>
  )
}
