'use client'

import { Dialog } from '@/components/ui/dialog'
import { CreateKeyForm } from './create-key-form'
import { EditKeyForm } from './edit-key-form'
import { RevokeKeyForm } from './revoke-key-form'
import { RotateKeyForm } from './rotate-key-form'
import { SecretReveal } from './secret-reveal'
import type { useKeyDialogs } from './use-key-dialogs'

/** The five dialogs of the keys page; `dialogs` says which one is open. */
export function KeyDialogs({ dialogs }: { dialogs: ReturnType<typeof useKeyDialogs> }) {
  const { dialog, close } = dialogs
  return (
    <>
      <Dialog open={dialog?.kind === 'create'} title="Create an API key" onClose={close}>
        <CreateKeyForm onCancel={close} onCreated={dialogs.created} />
      </Dialog>

      <Dialog
        open={dialog?.kind === 'edit'}
        title={dialog?.kind === 'edit' ? `Edit “${dialog.key.name}”` : 'Edit key'}
        onClose={close}
      >
        {dialog?.kind === 'edit' ? (
          <EditKeyForm apiKey={dialog.key} onCancel={close} onUpdated={dialogs.updated} />
        ) : null}
      </Dialog>

      <Dialog
        open={dialog?.kind === 'rotate'}
        title={dialog?.kind === 'rotate' ? `Rotate “${dialog.key.name}”` : 'Rotate key'}
        onClose={close}
      >
        {dialog?.kind === 'rotate' ? (
          <RotateKeyForm apiKey={dialog.key} onCancel={close} onRotated={dialogs.rotated} />
        ) : null}
      </Dialog>

      <Dialog
        open={dialog?.kind === 'revoke'}
        title={dialog?.kind === 'revoke' ? `Revoke “${dialog.key.name}”?` : 'Revoke key'}
        onClose={close}
      >
        {dialog?.kind === 'revoke' ? (
          <RevokeKeyForm apiKey={dialog.key} onCancel={close} onRevoked={() => dialogs.revoked(dialog.key)} />
        ) : null}
      </Dialog>

      <Dialog
        open={dialog?.kind === 'secret'}
        title={dialog?.kind === 'secret' ? dialog.title : 'Secret'}
        dismissible={false}
        onClose={close}
        wide
      >
        {dialog?.kind === 'secret' ? (
          <SecretReveal
            secret={dialog.result.secret}
            keyName={dialog.result.key.name}
            note={dialog.note}
            onDone={close}
          />
        ) : null}
      </Dialog>
    </>
  )
}
