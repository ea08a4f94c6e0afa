// The time left to answer, counted down every second on the page's clock (the server's when the device's is off).
import type { Clock } from '../../platform/clock.js'
import { h } from '../shared/dom.js'
import { formatRemaining } from './format.js'

/** The last minute is shown as urgent. */
const URGENT_MS = 60_000

export class Countdown {
  readonly element = h('p', { className: 'countdown', testId: 'countdown', attrs: { role: 'timer' } })
  private timer: ReturnType<typeof setInterval> | undefined

  /**
   * `onTimeUp` is asked every second once the time is up: true when the page has settled as expired, false to keep
   * counting (an answer is on its way, and its outcome settles the page).
   */
  constructor(
    private readonly expiresAtMs: number,
    private readonly clock: Clock,
    private readonly onTimeUp: () => boolean,
  ) {}

  start(): void {
    this.tick()
    this.timer = setInterval(() => this.tick(), 1000)
  }

  stop(): void {
    clearInterval(this.timer)
  }

  private tick(): void {
    const remainingMs = this.expiresAtMs - this.clock.now()
    if (remainingMs <= 0 && this.onTimeUp()) return
    this.element.replaceChildren(`Expires in ${formatRemaining(remainingMs)}`)
    this.element.classList.toggle('urgent', remainingMs <= URGENT_MS)
  }
}
