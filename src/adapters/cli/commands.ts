// The CLI's command handlers, by group; program.ts wires them to commander.
export * from './memory-commands.js'
export * from './store-commands.js'
export * from './agent-commands.js'
export * from './server-commands.js'
