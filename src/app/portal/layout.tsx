import type { Metadata } from 'next'
import type { ReactNode } from 'react'
import { NavLink } from '@/components/nav-link'
import { PortalProviders } from '@/components/portal/portal-providers'
import { SignInPanel } from '@/components/portal/sign-in/sign-in-panel'
import { SignOutButton } from '@/components/portal/sign-in/sign-out-button'
import { SignOutEverywhereButton } from '@/components/portal/sign-in/sign-out-everywhere'
import { getSessionUser } from '@/server/portal-auth/next-auth'
import { getServices } from '@/server/services/next-services'
import { devWalletOffered } from './dev-wallet'

export const dynamic = 'force-dynamic'

export const metadata: Metadata = { title: 'Portal' }

function shortAddress(address: string): string {
  return `${address.slice(0, 6)}…${address.slice(-4)}`
}

/** Every portal page needs a signed-in wallet: signed out, the page is the sign-in panel. */
export default async function PortalLayout({ children }: { children: ReactNode }) {
  const { config } = getServices()
  const user = await getSessionUser()
  return (
    <PortalProviders
      chain={{ chainId: config.CHAIN_ID, network: config.NETWORK, devWallet: devWalletOffered(config) }}
      account={user?.address}
    >
      {user ? (
        <div className="portal">
          <div className="portal-bar">
            <nav aria-label="Portal" className="tabs">
              <NavLink href="/portal" exact>
                API keys
              </NavLink>
              <NavLink href="/portal/audit">Audit trail</NavLink>
              <NavLink href="/portal/tokens">Tokens</NavLink>
              <NavLink href="/portal/webhooks">Webhooks</NavLink>
            </nav>
            <div className="account">
              <span className="muted small">Signed in as</span>{' '}
              <code title={user.address} data-testid="signed-in-address">
                {shortAddress(user.address)}
              </code>
              <SignOutButton />
              <SignOutEverywhereButton />
            </div>
          </div>
          {children}
        </div>
      ) : (
        <SignInPanel publicUrl={config.PUBLIC_URL} />
      )}
    </PortalProviders>
  )
}
