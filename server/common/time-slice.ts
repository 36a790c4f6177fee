/** Time slices of cooperative work: the helper lives in storage/, which writes large documents in turns too. */
export { SLICE_MS, TimeSlice } from '../../storage/time-slice'
