/** JSON in turns (parse and stringify): the helpers live in storage/, which writes large documents in turns too. */
export {
  parseJsonCooperatively,
  SMALL,
  TooManyMembers,
  type JsonOptions,
  stringifyCooperatively,
  type JsonPieces,
  type JsonText,
} from '../../storage/cooperative-json'
