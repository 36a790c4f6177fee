/** Nitro's virtual module of runtime polyfills (empty on Node), imported first by server/app/node-server.ts. */
declare module '#nitro-internal-pollyfills' {}
