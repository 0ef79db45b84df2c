/**
 * A function as a JavaScript caller sees it: every parameter `unknown`, so
 * a test can pass what the types forbid (a misspelt key, a string where an
 * array goes) and check the run-time refusal, with no cast at each call.
 * @param f the function under test
 * @returns the same function, its parameters typed `unknown`
 */
export function untyped<A extends unknown[], R>(f: (...args: A) => R): (...args: { [K in keyof A]: unknown }) => R {
  return f as unknown as (...args: { [K in keyof A]: unknown }) => R;
}
