/**
 * Loading Swagger UI (swagger-ui-dist, served by the app at /docs/assets) and
 * the few parts of its API the reference page uses (docs/portal.md, API
 * reference page).
 */

/** The slice of a Swagger UI instance the page calls. */
export interface SwaggerUI {
  /** Sets the value of an apiKey or http bearer scheme, as the Authorize dialog would. */
  preauthorizeApiKey(schemeName: string, value: string): void
  specSelectors: { specJson(): { toJS(): OpenApiDocument } }
}

interface OpenApiDocument {
  components?: { securitySchemes?: Record<string, { type?: string; scheme?: string }> }
}

type SwaggerUIBundleFn = (options: Record<string, unknown>) => SwaggerUI

declare global {
  interface Window {
    SwaggerUIBundle?: SwaggerUIBundleFn
  }
}

const SCRIPT = '/docs/assets/swagger-ui-bundle.js'
export const SWAGGER_STYLESHEET = '/docs/assets/swagger-ui.css'

function loadScript(src: string): Promise<SwaggerUIBundleFn> {
  const existing = document.querySelector<HTMLScriptElement>(`script[src="${src}"]`)
  if (existing && window.SwaggerUIBundle) return Promise.resolve(window.SwaggerUIBundle)
  return new Promise((resolve, reject) => {
    const script = existing ?? document.createElement('script')
    script.addEventListener(
      'load',
      () => (window.SwaggerUIBundle ? resolve(window.SwaggerUIBundle) : reject(new Error(`${src} is empty`))),
      { once: true },
    )
    script.addEventListener('error', () => reject(new Error(`could not load ${src}`)), { once: true })
    if (!existing) {
      script.src = src
      script.async = true
      document.head.appendChild(script)
    }
  })
}

/**
 * Renders the document at `specUrl` into `domNode`, unless `signal` is aborted
 * first; resolves once the document is rendered. "Try it out" calls this service (the document's only
 * server); the public validator badge is off (it would call another host).
 */
export async function mountSwaggerUI(
  domNode: HTMLElement,
  specUrl: string,
  signal: AbortSignal,
): Promise<SwaggerUI> {
  const SwaggerUIBundle = await loadScript(SCRIPT)
  // The page may have gone (or React remounted it) while the script loaded.
  signal.throwIfAborted()
  return new Promise((resolve) => {
    const ui: SwaggerUI = SwaggerUIBundle({
      url: specUrl,
      domNode,
      deepLinking: false,
      validatorUrl: null,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      displayRequestDuration: true,
      // Plain code blocks in the site's colours: the highlighter's themes bring their own
      // palettes, some of whose colours fail contrast.
      syntaxHighlight: { activated: false },
      // Authorization lives in this page's memory only: a reload forgets it.
      persistAuthorization: false,
      onComplete: () => resolve(ui),
    })
  })
}

/** The name of the document's HTTP bearer scheme, the one demo tokens and keys fill in. */
export function bearerSchemeName(ui: SwaggerUI): string | undefined {
  const schemes = ui.specSelectors.specJson().toJS().components?.securitySchemes ?? {}
  return Object.entries(schemes).find(
    ([, scheme]) => scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer',
  )?.[0]
}

/**
 * Small fixes to Swagger UI's markup for assistive technology, re-applied
 * whenever Swagger UI re-renders (it leaves attributes it did not set alone):
 * - its servers <select> sits in an empty <label> beside a "Servers" caption
 *   that is not tied to it: the caption now names it;
 * - a parameter's <select> (an enum) has no name: the parameter's name is used;
 * - code blocks (examples, responses) scroll without being focusable: they
 *   take keyboard focus, so they can be scrolled with the keyboard.
 * Returns a stop function.
 */
export function fixSwaggerAccessibility(root: HTMLElement): () => void {
  const apply = () => {
    const caption = root.querySelector<HTMLElement>('.servers-title')
    const servers = root.querySelector<HTMLSelectElement>('.servers select')
    if (caption && servers && !servers.hasAttribute('aria-labelledby')) {
      caption.id ||= 'swagger-servers-title'
      servers.setAttribute('aria-labelledby', caption.id)
    }
    for (const select of root.querySelectorAll<HTMLSelectElement>(
      'tr[data-param-name] select:not([aria-label])',
    )) {
      const name = select.closest('tr')?.dataset.paramName
      if (name) select.setAttribute('aria-label', name)
    }
    for (const block of root.querySelectorAll<HTMLElement>('pre.microlight:not([tabindex])')) {
      block.tabIndex = 0
    }
  }
  apply()
  const observer = new MutationObserver(apply)
  observer.observe(root, { childList: true, subtree: true })
  return () => observer.disconnect()
}
