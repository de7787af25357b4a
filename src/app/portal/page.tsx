import type { Metadata } from 'next'
import { KeysManager } from '@/components/portal/keys/keys-manager'
import { listApiKeys } from '@/server/api/portal/keys/api-keys'
import { getSessionUser } from '@/server/portal-auth/next-auth'
import { getServices } from '@/server/services/next-services'

export const metadata: Metadata = { title: 'API keys' }

export default async function KeysPage() {
  // Rendered with the page, so the list shows without a loading state.
  const user = await getSessionUser()
  const initialKeys = user
    ? await listApiKeys(getServices().db, BigInt(user.id)).catch(() => undefined)
    : undefined
  return <KeysManager initialKeys={initialKeys} />
}
