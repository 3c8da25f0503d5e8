/**
 * A document as JSON.parse or yaml's parse() gives it (an API's answer, a deploy file, Prometheus's
 * API), read by a test that checks each field it uses with its own assertions. Those parsers return
 * `any`; naming it once here keeps that the one place a test's types are open.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON.parse and yaml's parse() return any; the tests' assertions check the shape
export type Parsed = any;
