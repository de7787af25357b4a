/**
 * Signals that ask a process of the service to stop: Ctrl-C, a service
 * manager's SIGTERM, and the SIGHUP a closed terminal sends. Every process
 * stops cleanly on each of them, with exit code 0 (docs/operations.md).
 */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
