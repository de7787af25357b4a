/**
 * The portal's test fixtures: every page of every test is watched, and the
 * test fails if the page asked any host but the service's own for anything
 * (fonts, scripts, images, XHR …) — the portal must work fully offline. A
 * request the page's own Content-Security-Policy refused is not counted: the
 * browser never sent it.
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
      // A request the page's Content-Security-Policy blocked never left the browser.
      context.on('requestfailed', (request) => {
        if (request.failure()?.errorText !== 'csp') return
        const i = foreign.indexOf(request.url())
        if (i !== -1) foreign.splice(i, 1)
      })
      await use(foreign)
      expect(foreign, 'requests to other hosts').toEqual([])
    },
    { auto: true },
  ],
})

export { expect }

export const SCREENSHOTS = 'e2e/artifacts/screenshots'
