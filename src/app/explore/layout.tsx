import type { ReactNode } from 'react'
import { NavLink } from '@/components/nav-link'

/** The explorer's pages (docs/explorer.md): data from the public /v1 API only, through the typed client. */
export default function ExploreLayout({ children }: { children: ReactNode }) {
  return (
    <div className="explorer">
      <nav aria-label="Explorer" className="explore-nav">
        <NavLink href="/explore" exact>
          Collections
        </NavLink>
        <NavLink href="/explore/activity">Live activity</NavLink>
        <span className="muted small explore-nav-note">
          Read through the public API with a demo token · <a href="/docs#guide">how</a>
        </span>
      </nav>
      {children}
    </div>
  )
}
