'use client'

import { useMutation } from '@tanstack/react-query'
import type { AuditExportFormat, AuditFilterInput } from '@/components/portal/trpc'

/** The export's address: the server streams the file (src/server/api/portal/keys/audit-export.ts). */
export function auditExportUrl(filter: AuditFilterInput, format: AuditExportFormat): string {
  const params = new URLSearchParams({ format })
  for (const [name, value] of Object.entries(filter)) if (value !== undefined) params.set(name, String(value))
  return `/api/portal/audit-export?${params}`
}

/** Downloads the filtered trail as CSV or JSON; a refusal's sentence becomes the error shown. */
export function useAuditExport() {
  return useMutation({
    mutationFn: async ({ filter, format }: { filter: AuditFilterInput; format: AuditExportFormat }) => {
      const res = await fetch(auditExportUrl(filter, format))
      if (!res.ok) {
        const refusal = (await res.json().catch(() => undefined)) as
          | { error?: { message?: string } }
          | undefined
        throw new Error(
          refusal?.error?.message ?? 'The portal could not reach the service. Try again in a moment.',
        )
      }
      const filename =
        /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `audit.${format}`
      const url = URL.createObjectURL(await res.blob())
      const link = document.createElement('a')
      link.href = url
      link.download = filename
      link.click()
      setTimeout(() => URL.revokeObjectURL(url), 1000)
      return filename
    },
  })
}
