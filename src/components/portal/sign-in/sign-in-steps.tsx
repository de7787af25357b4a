import { SIGN_IN_STEPS, type SignInStep } from './use-siwe-sign-in'

/** The four steps of a sign-in, the current one marked, announced to screen readers. */
export function SignInSteps({ step }: { step: SignInStep }) {
  const activeIndex = SIGN_IN_STEPS.findIndex((s) => s.id === step)
  return (
    <>
      <ol className="steps" aria-label="Sign-in progress">
        {SIGN_IN_STEPS.map((s, i) => (
          <li
            key={s.id}
            className={i < activeIndex ? 'done' : i === activeIndex ? 'active' : ''}
            aria-current={i === activeIndex ? 'step' : undefined}
          >
            {s.label}
          </li>
        ))}
      </ol>
      <p className="visually-hidden" role="status" aria-live="polite">
        {step !== 'idle' ? `${SIGN_IN_STEPS[activeIndex]?.label ?? ''}…` : ''}
      </p>
    </>
  )
}
