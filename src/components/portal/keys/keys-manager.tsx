'use client'

import { type ApiKeyView, errorMessage } from '@/components/portal/trpc'
import { UsagePanel } from '@/components/portal/usage/usage-panel'
import { KeyDialogs } from './key-dialogs'
import { KeysTable } from './keys-table'
import { useApiKeys } from './use-api-keys'
import { useKeyDialogs } from './use-key-dialogs'

/** The keys page: the user's keys (active, then revoked) and the dialogs that change them. */
export function KeysManager({ initialKeys }: { initialKeys?: ApiKeyView[] }) {
  const keys = useApiKeys(initialKeys)
  const dialogs = useKeyDialogs()

  return (
    <>
      <div className="page-head">
        <div>
          <h1>API keys</h1>
          <p className="muted">
            Keys are server-side secrets: keep them out of browsers, repositories and URLs. Each key is
            limited to 5 requests per second, 300 per minute and 10 at a time.
          </p>
        </div>
        <button type="button" className="button" onClick={dialogs.openCreate}>
          Create key
        </button>
      </div>

      <p className="visually-hidden" role="status" aria-live="polite">
        {dialogs.announcement}
      </p>

      {keys.isPending ? (
        <p className="muted" role="status">
          Loading your keys…
        </p>
      ) : keys.isError ? (
        <p className="alert error" role="alert">
          {errorMessage(keys.error)}{' '}
          <button type="button" className="link-button" onClick={() => keys.refetch()}>
            Retry
          </button>
        </p>
      ) : keys.data.length === 0 ? (
        <div className="empty panel">
          <h2 className="h3">No keys yet</h2>
          <p className="muted">
            Create a key, then send it as <code>Authorization: Bearer &lt;key&gt;</code> from your server.
          </p>
          <button type="button" className="button" onClick={dialogs.openCreate}>
            Create your first key
          </button>
        </div>
      ) : (
        <>
          <KeysTable
            caption="Active keys"
            keys={keys.data.filter((k) => k.status === 'active')}
            actions={{ onEdit: dialogs.openEdit, onRotate: dialogs.openRotate, onRevoke: dialogs.openRevoke }}
          />
          <KeysTable caption="Revoked keys" keys={keys.data.filter((k) => k.status === 'revoked')} />
          <UsagePanel keys={keys.data} />
        </>
      )}

      <KeyDialogs dialogs={dialogs} />
    </>
  )
}
