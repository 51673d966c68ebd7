// serve's start trace (BULWARK_START_TRACE): ms since the process began at each step of a start,
// read by test/bench/startup.ts. Kept always, from process.uptime(): the global `performance` (its
// marks, even its now()) loads perf_hooks, ~1 ms of every start just to be ready for a trace.
const steps: Record<string, number> = {}

/** Notes that a step of the start is done now. */
export function startStep(name: string): void {
  steps[name] = Math.round(process.uptime() * 10_000) / 10
}

/** The steps noted so far, in order. */
export function startSteps(): Readonly<Record<string, number>> {
  return steps
}
