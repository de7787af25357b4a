import type { Metadata } from 'next'
import type { ReactNode } from 'react'
import './globals.css'

export const metadata: Metadata = {
  title: { default: 'NFT Data API', template: '%s · NFT Data API' },
  description: 'Read-only ERC-721 data — collections, NFTs, owners, transfers and activity — through a versioned REST API.',
}

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="site-header">
          <nav aria-label="Main">
            <a className="brand" href="/">
              NFT Data API
            </a>
            <a href="/docs">Docs</a>
            <a href="/try">Try it</a>
            <a href="/portal">Portal</a>
          </nav>
        </header>
        <main id="main">{children}</main>
        <footer>
          <div>
            Read-only ERC-721 index · <a href="/openapi.json">OpenAPI</a>
          </div>
        </footer>
      </body>
    </html>
  )
}
