import type { Metadata, Viewport } from 'next'
import type { ReactNode } from 'react'
import { NavLink } from '@/components/nav-link'
import { loadConfig } from '@/config/env'
// The site's styles by area, in cascade order (docs/portal.md, "Code layout").
import './globals.css'
import './styles/controls.css'
import './styles/tables-portal.css'
import './styles/try.css'
import './styles/docs-pages.css'
import './styles/explorer.css'

export const metadata: Metadata = {
  title: { default: 'NFT Data API', template: '%s · NFT Data API' },
  description:
    'Read-only ERC-721 data — collections, NFTs, owners, transfers and activity — through a versioned REST API.',
  // /favicon.ico for browsers and tools that ask for it by name; the SVG for the rest.
  icons: {
    icon: [
      { url: '/favicon.ico', sizes: '16x16 32x32 48x48' },
      { url: '/favicon.svg', type: 'image/svg+xml' },
    ],
  },
}

export const viewport: Viewport = { themeColor: '#0b0d12', colorScheme: 'dark' }

/**
 * No page loads anything from another host: the policy below makes that a
 * browser-enforced rule (fonts, scripts, images, connections are 'self'; images also from
 * MEDIA_ORIGIN when the media path is served from an origin of its own).
 */
/**
 * MEDIA_ORIGIN (a separate origin for /v1/media), whose pictures the explorer shows; read through
 * the validated configuration (`npm start` refuses an invalid one before the portal runs).
 */
function mediaOrigin(): string {
  const origin = loadConfig().MEDIA_ORIGIN
  return origin ? ` ${new URL(origin).origin}` : ''
}

const CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  `img-src 'self' data: blob:${mediaOrigin()}`,
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'none'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ')

function BrandMark() {
  return (
    <svg className="brand-mark" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <rect x="2" y="2" width="20" height="20" rx="5" fill="#4f6ef0" />
      <path d="M7 16V8l5 8V8m5 0v8" stroke="#fff" strokeWidth="2" fill="none" strokeLinecap="round" />
    </svg>
  )
}

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <head>
        {process.env.NODE_ENV === 'production' ? (
          <meta httpEquiv="Content-Security-Policy" content={CSP} />
        ) : null}
      </head>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="site-header">
          <nav aria-label="Main">
            <a className="brand" href="/">
              <BrandMark />
              NFT Data API
            </a>
            <NavLink href="/explore">Explore</NavLink>
            <NavLink href="/docs">Docs</NavLink>
            <NavLink href="/try">Try it</NavLink>
            <NavLink href="/portal">Portal</NavLink>
          </nav>
        </header>
        <main id="main" tabIndex={-1}>
          {children}
        </main>
        <footer>
          <div>
            <span>Read-only ERC-721 index · REST API v1</span>
            <span>
              <a href="/openapi.json">OpenAPI 3.1</a> · <a href="/docs#guide">Guide</a> ·{' '}
              <a href="/docs#reference">Reference</a>
            </span>
          </div>
        </footer>
      </body>
    </html>
  )
}
