'use client'

import { type ReactNode, useEffect, useId, useRef } from 'react'

/**
 * A modal built on the native <dialog> element: focus moves into it (to the
 * element marked data-autofocus, if any) and stays there while open, Escape
 * closes it, and focus returns to the control that opened it.
 */
export function Dialog({
  open,
  title,
  onClose,
  children,
  dismissible = true,
  wide = false,
}: {
  open: boolean
  title: string
  onClose: () => void
  children: ReactNode
  /** false while a secret is on screen: Escape and the backdrop do not close it. */
  dismissible?: boolean
  wide?: boolean
}) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    if (open && !dialog.open) {
      dialog.showModal()
      // showModal() focuses the first focusable element; a dialog may name a better one.
      dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus()
    }
    if (!open && dialog.open) dialog.close()
  }, [open])
  return (
    <dialog
      ref={ref}
      className={wide ? 'dialog wide' : 'dialog'}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault()
        if (dismissible) onClose()
      }}
      onClose={() => open && onClose()}
    >
      {open ? (
        <>
          <header className="dialog-header">
            <h2 id={titleId}>{title}</h2>
            {dismissible ? (
              <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>
                ×
              </button>
            ) : null}
          </header>
          <div className="dialog-body">{children}</div>
        </>
      ) : null}
    </dialog>
  )
}
