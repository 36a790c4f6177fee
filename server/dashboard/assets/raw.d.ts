/** Nitro's raw loader: `.css` files and `raw:` imports arrive as text. */
declare module '*.css' {
  const text: string
  export default text
}
declare module 'raw:*' {
  const text: string
  export default text
}
