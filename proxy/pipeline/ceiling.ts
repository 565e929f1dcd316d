/**
 * The gateway's concurrent-request ceiling in this process. Past it a request is refused at once with
 * 503 `overloaded` and `Retry-After: 5`, before any hold, so an overloaded gateway sheds load cheaply.
 */
export class Ceiling {
  private active = 0

  constructor(private readonly max: number) {}

  /** Takes a slot; false when the ceiling is reached. */
  enter(): boolean {
    if (this.active >= this.max) return false
    this.active += 1
    return true
  }

  leave(): void {
    this.active -= 1
  }

  get inUse(): number {
    return this.active
  }
}
