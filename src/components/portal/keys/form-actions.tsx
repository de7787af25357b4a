import { errorMessage } from '@/components/portal/trpc'

/**
 * The footer of a key dialog: the mutation's error, if any, then cancel and
 * confirm. Without `onConfirm` the confirm button submits the surrounding form;
 * with it (a destructive action) it is a danger button and cancel takes focus.
 */
export function FormActions({
  mutation,
  onCancel,
  cancelLabel = 'Cancel',
  label,
  busyLabel,
  onConfirm,
}: {
  mutation: { isError: boolean; error: unknown; isPending: boolean }
  onCancel: () => void
  cancelLabel?: string
  label: string
  busyLabel: string
  onConfirm?: () => void
}) {
  return (
    <>
      {mutation.isError ? (
        <p className="alert error" role="alert">
          {errorMessage(mutation.error)}
        </p>
      ) : null}
      <div className="form-actions">
        <button
          type="button"
          className="button secondary"
          onClick={onCancel}
          data-autofocus={onConfirm ? true : undefined}
        >
          {cancelLabel}
        </button>
        <button
          type={onConfirm ? 'button' : 'submit'}
          className={onConfirm ? 'button danger' : 'button'}
          disabled={mutation.isPending}
          onClick={onConfirm}
        >
          {mutation.isPending ? busyLabel : label}
        </button>
      </div>
    </>
  )
}
