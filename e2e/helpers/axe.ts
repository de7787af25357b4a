/** axe-core on a page (or a part of it): its serious and critical WCAG 2.1 A/AA violations. */
import AxeBuilder from '@axe-core/playwright'
import type { Page } from '@playwright/test'

export async function seriousViolations(page: Page, options: { include?: string } = {}) {
  let builder = new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
  if (options.include) builder = builder.include(options.include)
  const results = await builder.analyze()
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }))
}
