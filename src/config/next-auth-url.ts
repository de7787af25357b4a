/**
 * next-auth v4 takes its base URL from the NEXTAUTH_URL environment variable only
 * (its origin detection, its secure-cookie choice and its client all read
 * process.env; NextAuthOptions has no such option). The web process therefore
 * derives it from PUBLIC_URL here, the one place the service writes its own
 * environment, before Next.js loads (docs/design.md, "Configuration contract").
 */
import type { Config } from './env'

export function exportNextAuthUrl(config: Pick<Config, 'PUBLIC_URL'>): void {
  process.env.NEXTAUTH_URL = config.PUBLIC_URL
}
