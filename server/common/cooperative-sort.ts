import { TimeSlice } from './time-slice'

/**
 * A stable sort (as `Array.prototype.sort`) that takes turns with the rest of the process: a
 * bottom-up merge sort checking the time slice every 1,024 steps. For lists whose length an
 * outsider decides (the versions of an upstream's packument).
 * @example await sortCooperatively(['b', 'a'], (x, y) => x.localeCompare(y)) // ['a', 'b']
 */
export async function sortCooperatively<T>(
  items: readonly T[],
  compare: (a: T, b: T) => number,
  slice = new TimeSlice(),
): Promise<T[]> {
  let from = [...items]
  let to = new Array<T>(from.length)
  for (let width = 1; width < from.length; width *= 2) {
    for (let lo = 0; lo < from.length; lo += 2 * width) {
      const mid = Math.min(lo + width, from.length)
      const hi = Math.min(lo + 2 * width, from.length)
      let i = lo
      let j = mid
      let k = lo
      // The left item first unless the right one is strictly smaller: equal items keep their order.
      while (i < mid && j < hi) {
        to[k++] = compare(from[j], from[i]) < 0 ? from[j++] : from[i++]
        if ((k & 1023) === 0) await slice.step()
      }
      while (i < mid) to[k++] = from[i++]
      while (j < hi) to[k++] = from[j++]
      await slice.step()
    }
    ;[from, to] = [to, from]
  }
  return from
}
