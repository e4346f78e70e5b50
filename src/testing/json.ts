/**
 * A JSON document a test parsed from a reply (REST body, CLI `--json` output, MCP result, SSE data, a config file)
 * and reads field by field. Each assertion checks the fields it reads, and `conforms` checks a whole REST body against
 * its route's schema, so the parsed value is not narrowed first; element types are given where a callback reads them.
 */
// biome-ignore lint/suspicious/noExplicitAny: the one place the tests' parsed JSON is typed loosely, for the reason above
export type ParsedJson = any
