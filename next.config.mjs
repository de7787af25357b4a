import path from 'node:path'

/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Server-only packages loaded from node_modules at run time, not bundled.
  serverExternalPackages: ['pg', 'pino', 'pino-pretty', 'prom-client', 'ioredis', '@prisma/adapter-pg'],
  // Types are checked once, by `npm run typecheck` in the test command; the
  // start-up build skips a second pass.
  typescript: { ignoreBuildErrors: true },
  // The typed client (src/client) imports its modules as './x.js' (NodeNext); Turbopack does not
  // map those to the .ts files, so a loader drops the extension (scripts/strip-js-extensions-loader.cjs).
  turbopack: {
    rules: {
      '*.ts': {
        condition: { all: [{ not: 'foreign' }, { path: /^src\/client\/[^/]+\.ts$/ }] },
        as: '*.ts',
        loaders: [path.join(import.meta.dirname, 'scripts/strip-js-extensions-loader.cjs')],
      },
    },
  },
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
          { key: 'X-Frame-Options', value: 'DENY' },
        ],
      },
    ]
  },
}

export default nextConfig
