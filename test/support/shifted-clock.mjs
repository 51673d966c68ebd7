// Preloaded into a server under test (NODE_OPTIONS=--import) to start its wall clock at
// BULWARK_TEST_NOW, an ISO instant, and let it run on from there at real speed: libfaketime's
// offset mode in a few lines. Timers are untouched, so node-cron really waits for its minute.
const target = Date.parse(process.env.BULWARK_TEST_NOW ?? '')
if (Number.isNaN(target)) throw new Error('shifted-clock: BULWARK_TEST_NOW must be an ISO instant')
const RealDate = Date
const offset = target - RealDate.now()

class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset)
    else super(...args)
  }
  static now() {
    return RealDate.now() + offset
  }
}
// Date() called as a function returns a string of the current time.
globalThis.Date = new Proxy(ShiftedDate, { apply: () => new ShiftedDate().toString() })
