/**
 * The portal's test fixtures: every page of every test is watched, and the
 * test fails if the page asked any host but the service's own for anything
 * (fonts, scripts, images, XHR …) — the portal must work fully offline.
 */
import { test as base, expect } from '@playwright/test'

export const test = base.extend<{ foreignRequests: string[] }>({
  foreignRequests: [
    async ({ context, baseURL }, use) => {
      const own = new URL(baseURL!).host
      const foreign: string[] = []
      context.on('request', (request) => {
        const url = new URL(request.url())
        if ((url.protocol === 'http:' || url.protocol === 'https:') && url.host !== own)
          foreign.push(request.url())
      })
      await use(foreign)
      expect(foreign, 'requests to other hosts').toEqual([])
    },
    { auto: true },
  ],
})

export { expect }

export const SCREENSHOTS = 'e2e/artifacts/screenshots'
