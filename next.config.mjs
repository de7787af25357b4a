/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Server-only packages loaded from node_modules at run time, not bundled.
  serverExternalPackages: ['pg', 'pino', 'pino-pretty', 'prom-client', 'ioredis', '@prisma/adapter-pg'],
  // Types are checked once, by `npm run typecheck` in the test command; the
  // start-up build skips a second pass.
  typescript: { ignoreBuildErrors: true },
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
