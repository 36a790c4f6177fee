/**
 * The middle of `values` (the upper of the two middle ones for an even count), the figure the
 * benches print over rounds or runs so that one slow round does not move it.
 * @example median([3, 1, 2]) // 2
 */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
}
