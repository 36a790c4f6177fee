/** Reading client-keyed JSON objects safely: the helpers live with the storage that reads them back. */
export { mapOf, own, ownRecord, recordOf } from '../../storage/own'
