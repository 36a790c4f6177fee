import { TimeSlice } from '../../server/common/time-slice'

/** A slice that is always spent, so every check point pauses: counts the turns given to the loop. */
export class CountingSlice extends TimeSlice {
  pauses = 0
  override spent(): boolean {
    return true
  }
  override async pause(): Promise<void> {
    this.pauses++
    await super.pause()
  }
}
