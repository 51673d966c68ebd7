// Urgent requests first. Node serves requests in the order their sockets become readable, on one
// thread: under a flood of reads (50 bots polling signals), an emergency kill switch would wait
// behind every read already queued. Routes marked `urgent` run as soon as they arrive; every other
// request takes a turn, a few per turn of the event loop, so an urgent request never waits behind
// more than that handful (well under a millisecond), while the loop is not spun once per request.
const PER_TURN = 8
const waiting: (() => void)[] = []
let draining = false

function drain(): void {
  for (let i = 0; i < PER_TURN && waiting.length; i++) waiting.shift()!()
  if (waiting.length) setImmediate(drain)
  else draining = false
}

/** Resolves when it is this request's turn; the request then runs in the microtasks that follow. */
export function takeTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve)
    if (!draining) {
      draining = true
      setImmediate(drain)
    }
  })
}
