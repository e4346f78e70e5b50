/**
 * The capture rules a surface applies itself, to input that reaches the engine later or never: a hook redacts and caps
 * an event before spooling it (the store is busy) or posting it to a team server, and the HTTP server redacts what it
 * echoes of a bad request. Surfaces take them from here, the engine's door (ARCHITECTURE.md: adapters call the
 * engine); capture/ owns them and the engine applies the same ones to what it stores.
 */
export { redactSecrets } from '../capture/redact.js'
export { PRE_REDACTION_CHARS, sanitizePayload } from '../capture/sanitize.js'
