/**
 * Project resolution for the surfaces: the project a working directory belongs to (its git top level, else the folder
 * itself), as the engine resolves it for writes. A hook resolves it where the folder exists before posting to a team
 * server, and the CLI names it for `connect` and for team-mode commands. Surfaces take it from here, the engine's door
 * (ARCHITECTURE.md: adapters call the engine); capture/project.ts owns it.
 */
export { resolveProjectRoot } from '../capture/project.js'
