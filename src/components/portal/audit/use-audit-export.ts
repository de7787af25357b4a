'use client'

import { useMutation, useQueryClient } from '@tanstack/react-query'
import { type AuditExportFormat, type AuditFilterInput, useTRPC } from '../trpc'

/** Fetches the filtered trail as CSV or JSON and hands it to the browser as a download. */
export function useAuditExport() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async ({ filter, format }: { filter: AuditFilterInput; format: AuditExportFormat }) => {
      const file = await queryClient.fetchQuery({
        ...trpc.keys.auditExport.queryOptions({ ...filter, format }),
        staleTime: 0,
      })
      const url = URL.createObjectURL(new Blob([file.body], { type: file.content_type }))
      const link = document.createElement('a')
      link.href = url
      link.download = file.filename
      link.click()
      setTimeout(() => URL.revokeObjectURL(url), 1000)
      return file.filename
    },
  })
}
